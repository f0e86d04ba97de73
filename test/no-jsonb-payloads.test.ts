import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * jsonb reorders an object's names (shortest first, then bytewise), so a submission's fields would
 * lose their posted order on any path through it. Source code may name jsonb only where no payload
 * or envelope passes, and says so on that line or the one above: `not a payload: <what it holds>`.
 * The migrations up to 006 are history (they made the payload columns json) and are not read.
 */
const ROOT = path.resolve(__dirname, '..');
const HISTORY = /^00[1-6]-/;
/** jsonb, its casts, columns and functions (`::jsonb`, `t.jsonb(`, `jsonb_build_object`, `to_jsonb`). */
const JSONB = /\b(?:to_)?jsonb(?:_[a-z_]+)?\b/i;
const COMMENT = /^\s*(?:\*|\/\*|\/\/)/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' ? [] : sourceFiles(full);
    if (!/\.tsx?$/.test(entry.name) || /\.test\.tsx?$/.test(entry.name)) return [];
    if (full.includes(`${path.sep}migrations${path.sep}`) && HISTORY.test(entry.name)) return [];
    return [full];
  });
}

/** Every line naming jsonb without saying, there or on the line above, that no payload passes. */
function unexplainedJsonb(file: string): string[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  return lines.flatMap((line, i) =>
    JSONB.test(line) &&
    !COMMENT.test(line) &&
    !/not a payload:/.test(line) &&
    !/not a payload:/.test(lines[i - 1] ?? '')
      ? [`${path.relative(ROOT, file)}:${i + 1}: ${line.trim()}`]
      : [],
  );
}

describe('posted field order', () => {
  it('no source names jsonb on a path a payload or an envelope could take', () => {
    const roots = [
      path.join(ROOT, 'shared/src'),
      ...['ingest', 'management', 'delivery', 'usage'].map((s) => path.join(ROOT, 'services', s, 'src')),
    ];
    const files = roots.flatMap(sourceFiles);
    expect(files.length).toBeGreaterThan(50);
    expect(files.flatMap(unexplainedJsonb)).toEqual([]);
  });
});
