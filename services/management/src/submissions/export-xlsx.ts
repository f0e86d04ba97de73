import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import ExcelJS from 'exceljs';
import { problem } from '@intake/shared/contracts';

/** Excel's limit on one cell's text. */
export const XLSX_CELL_MAX = 32_767;

/**
 * Characters XML 1.0 cannot hold (C0 controls but tab, LF and CR; U+FFFE, U+FFFF; a lone surrogate): a workbook
 * holding one is refused by Excel as corrupt, so each is written as U+FFFD.
 */
const NOT_XML =
  // eslint-disable-next-line no-control-regex -- these control characters are what it finds
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * A posted value or field name as an Excel text cell: exactly as posted (a value starting with = + - @ stays text,
 * since a text cell is never a formula), but for the characters XML cannot hold, and cut at Excel's 32,767 characters
 * with a note saying so (the NDJSON export has every character).
 */
export function xlsxText(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = (typeof value === 'string' ? value : JSON.stringify(value)).replace(NOT_XML, '\uFFFD');
  if (text.length <= XLSX_CELL_MAX) return text;
  const note = ` … (cut: ${text.length} characters in all; the NDJSON export has every one)`;
  return text.slice(0, XLSX_CELL_MAX - note.length) + note;
}

/** An IANA time zone the runtime knows, else a 422 naming the query parameter. */
export function checkTimeZone(zone: string): string {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    throw problem('validation-failed', `query/tz is not a time zone: ${JSON.stringify(zone.slice(0, 64))}`, {
      errors: [{ field: 'query/tz', message: 'must be an IANA time zone such as Europe/Paris or UTC' }],
    });
  }
}

/**
 * The wall-clock time of `instant` in `zone`, as the Date whose UTC fields are that time: an Excel date has no zone,
 * so a cell shows what a clock in the zone showed.
 */
export function wallClock(zone: string): (instant: Date) => Date {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  return (instant) => {
    const parts = Object.fromEntries(format.formatToParts(instant).map((p) => [p.type, Number(p.value)]));
    const { year, month, day, hour, minute, second } = parts as Record<string, number>;
    return new Date(Date.UTC(year!, month! - 1, day!, hour!, minute!, second!, instant.getUTCMilliseconds()));
  };
}

/** A cell of a row: text, a number, or a received time (a date cell). */
export type XlsxValue = string | number | null | { at: Date };

/**
 * Streams rows into one worksheet, each row written out as it comes and waiting while the reader is behind (never the
 * whole sheet in memory; the strings are written in the cells, not in a shared table that would grow): the header row
 * bold and frozen, date cells shown as `yyyy-mm-dd hh:mm:ss`. Strings are written as text cells, never as formulas.
 */
export function xlsxStream(
  sheetName: string,
  header: string[],
  rows: AsyncIterable<XlsxValue[]>,
  onError: (err: Error) => void,
): PassThrough {
  const out = new PassThrough();
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: true, useSharedStrings: false });
  const sheet = workbook.addWorksheet(sheetName, { views: [{ state: 'frozen', ySplit: 1 }] });
  (async () => {
    const top = sheet.addRow(header.map(xlsxText));
    top.font = { bold: true };
    top.commit();
    for await (const values of rows) {
      // An empty value leaves its cell empty (a text cell holding nothing reads as neither text nor blank).
      const row = sheet.addRow(values.map((v) => (v !== null && typeof v === 'object' ? v.at : v === '' ? null : v)));
      values.forEach((v, i) => {
        if (v !== null && typeof v === 'object') row.getCell(i + 1).numFmt = 'yyyy-mm-dd hh:mm:ss';
      });
      row.commit();
      // The workbook's writer does not wait for a slow reader: the rows wait here while the response is full.
      if (out.writableNeedDrain) await once(out, 'drain');
    }
    sheet.commit();
    await workbook.commit();
  })().catch((err: Error) => {
    onError(err);
    out.destroy(err);
  });
  return out;
}
