import { useEffect } from 'preact/hooks';

/** How often a view with work still under way (a delivery being retried) loads its data again. */
export const LIVE_INTERVAL_MS = 2000;

/**
 * Loads again every `LIVE_INTERVAL_MS` while `active` (deliveries pending or retrying), so the view follows the
 * retries as they happen; it stops when they settle and while the tab is hidden.
 */
export function useLive(active: boolean, reload: () => Promise<void>) {
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void reload();
    }, LIVE_INTERVAL_MS);
    return () => clearInterval(timer);
  }, [active, reload]);
}

/** Whether any delivery still has an attempt to come. */
export const unsettled = (deliveries: { status: string }[] | undefined) =>
  (deliveries ?? []).some((d) => d.status === 'pending' || d.status === 'retrying');
