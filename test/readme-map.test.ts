import { readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..');
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
const section = readme.split('## Where each rule lives')[1]?.split('\n## ')[0] ?? '';
const entries = [...section.matchAll(/`([\w./-]+\.ts):(\w+)`/g)].map((m) => ({
  file: m[1] as string,
  symbol: m[2] as string,
}));

describe('README: where each rule lives', () => {
  it('has a table of rules', () => {
    expect(entries.length).toBeGreaterThanOrEqual(30);
  });

  it.each(entries)('$file declares $symbol', ({ file, symbol }) => {
    const source = readFileSync(path.join(root, file), 'utf8');
    expect(source).toMatch(new RegExp(`(function|class|const|let)\\s+${symbol}\\b`));
  });
});

describe('README: a reference', () => {
  it('stays at most 300 lines; details live in docs/', () => {
    expect(readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0)).toBeLessThanOrEqual(300);
  });

  it.each([...readme.matchAll(/\]\((docs\/[\w./-]+?)(#[\w-]+)?\)/g)].map((m) => m[1] as string))(
    'links %s, which exists',
    (doc) => {
      expect(() => readFileSync(path.join(root, doc))).not.toThrow();
    },
  );
});
