import { signal } from '@preact/signals';

const STORE_KEY = 'intake.timeZone';

/** The browser's own time zone (the default). */
export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

function validZone(zone: string | null): zone is string {
  if (!zone) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function storedZone(): string {
  try {
    const zone = localStorage.getItem(STORE_KEY);
    return validZone(zone) ? zone : browserZone();
  } catch {
    return browserZone();
  }
}

/** The zone every time in the console is shown and filtered in: the owner's choice, else the browser's. */
export const timeZone = signal<string>(storedZone());

/** Shows the console in `zone`: remembered in this browser, unless `remember` is false (a link's zone, for its view). */
export function setTimeZone(zone: string, remember = true) {
  if (!validZone(zone)) return;
  timeZone.value = zone;
  if (!remember) return;
  try {
    if (zone === browserZone()) localStorage.removeItem(STORE_KEY);
    else localStorage.setItem(STORE_KEY, zone);
  } catch {
    // Storage may be off: the choice then lasts until the page is reloaded.
  }
}

/** Every zone the browser knows (with the current choice and UTC always among them). */
export function zones(): string[] {
  const intl = Intl as unknown as { supportedValuesOf?: (key: string) => string[] };
  const known = intl.supportedValuesOf?.('timeZone') ?? [];
  return [...new Set(['UTC', browserZone(), timeZone.value, ...known])].sort((a, b) =>
    a === 'UTC' ? -1 : b === 'UTC' ? 1 : a.localeCompare(b),
  );
}

/*
 * The console's one way of writing dates (defect 17): every instant with formatTime, every day with formatDay, month
 * and day in words and the year in digits, in the browser's language; an instant in the chosen zone with its name.
 */
const DATE_PARTS = { year: 'numeric', month: 'short', day: 'numeric' } as const;

/** An instant as date and time in the chosen zone, with the zone's short name (so it is never ambiguous). */
export function formatTime(iso: string | null): string {
  if (!iso) return '—';
  return new Intl.DateTimeFormat(undefined, {
    ...DATE_PARTS,
    hour: 'numeric',
    minute: '2-digit',
    second: '2-digit',
    timeZone: timeZone.value,
    timeZoneName: 'short',
  }).format(new Date(iso));
}

/**
 * A UTC day (`YYYY-MM-DD`, as the API counts days) written as formatTime writes its date, and said to be UTC's
 * (`short`: month and day only, for a chart's axis); anything else as it is.
 */
export function formatDay(date: string, options: { short?: boolean } = {}): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return date;
  const at = new Date(`${date}T00:00:00Z`);
  if (Number.isNaN(at.getTime())) return date;
  if (options.short)
    return new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' }).format(at);
  return `${new Intl.DateTimeFormat(undefined, { ...DATE_PARTS, timeZone: 'UTC' }).format(at)} (UTC)`;
}

/** How far `zone` is ahead of UTC at `instant`, in milliseconds. */
function offsetAt(instant: number, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(instant));
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const asUtc = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/** The instant a day (`YYYY-MM-DD`) starts in `zone`, as ISO-8601 UTC; `plusDays` moves to a later day. */
export function startOfDay(date: string, zone: string, plusDays = 0): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return undefined;
  const wall = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + plusDays);
  if (Number.isNaN(wall)) return undefined;
  // The offset at the wall time read as UTC is right except near a change; a second look settles it.
  let instant = wall - offsetAt(wall, zone);
  instant = wall - offsetAt(instant, zone);
  const at = new Date(instant);
  return Number.isNaN(at.getTime()) ? undefined : at.toISOString();
}
