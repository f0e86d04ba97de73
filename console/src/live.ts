import { useEffect } from 'preact/hooks';

/** How often a view with work still under way (a delivery being retried) loads its data again. */
export const LIVE_INTERVAL_MS = 2000;
/** How often a view that shows new work as it comes (a webhook's delivery log) looks for it when all is settled. */
export const IDLE_INTERVAL_MS = 5000;

/**
 * Loads again every `LIVE_INTERVAL_MS` while `active` (deliveries pending or retrying), so the view follows the
 * retries as they happen; when settled, every `IDLE_INTERVAL_MS` if `watch` (new deliveries appear), else not at
 * all. Nothing is loaded while the tab is hidden.
 */
export function useLive(active: boolean, reload: () => Promise<void>, watch = false) {
  const every = active ? LIVE_INTERVAL_MS : watch ? IDLE_INTERVAL_MS : 0;
  useEffect(() => {
    if (!every) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void reload();
    }, every);
    return () => clearInterval(timer);
  }, [every, reload]);
}

/** Whether any delivery still has an attempt to come. */
export const unsettled = (deliveries: { status: string }[] | undefined) =>
  (deliveries ?? []).some((d) => d.status === 'pending' || d.status === 'retrying');
