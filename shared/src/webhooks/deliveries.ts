import type { EventType } from './signed-request';

export type DeliveryStatus = 'pending' | 'retrying' | 'succeeded' | 'failed';

/** A row of `deliveries`: the delivery service writes them (test pings too), management reads them (the log). */
export interface DeliveryRow {
  id: string;
  account_id: string;
  webhook_id: string;
  form_id: string;
  submission_id: string | null;
  event_type: EventType;
  data: Record<string, unknown>;
  status: DeliveryStatus;
  attempt_count: number;
  last_error: string | null;
  last_status_code: number | null;
  next_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
}
