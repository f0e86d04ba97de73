import { parse } from 'csv-parse/sync';
/**
 * Reads an export as spreadsheets and Python's `csv` read it (csv-parse): quoted fields and doubled quotes, and a bare
 * CR or LF outside quotes ends a record as CRLF does, so a cell written unquoted with one in it splits its row (and the
 * column count no longer matching throws).
 */
export function parseCsv(text: string): string[][] {
  return parse(text, { record_delimiter: ['\r\n', '\n', '\r'], relax_column_count: false });
}
