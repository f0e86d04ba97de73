import corpus from '../../../test/fixtures/spam-corpus.json';
import { learn, trainModel, weightsOf } from '../src/judge/spam-classifier';
import { postFeatures } from '../src/judge/spam-classifier';
import { compiledRules, payloadHash } from '../src/judge/spam-filter';

const examples = [
  ...corpus.spam.slice(0, 60).map((payload) => ({ payload, spam: true })),
  ...corpus.ham.slice(0, 60).map((payload) => ({ payload, spam: false })),
];
const heldOut = [...corpus.spam.slice(60), ...corpus.ham.slice(60)];

describe('the spam classifier', () => {
  it('scores a post with the library’s own odds (its weights are the library’s model, split per token)', () => {
    const nb = learn(examples);
    const model = trainModel(examples);
    if (!nb || !model) throw new Error('no model');
    const { prior, weights } = weightsOf(nb);
    for (const payload of heldOut.slice(0, 40)) {
      const tokens = [...new Set(postFeatures(payload).tokens)];
      const odds = nb.computeOdds(tokens).find(([label]) => label === 'spam')?.[1] as number;
      const ours = tokens.reduce((sum, t) => sum + (weights.get(t) ?? 0), prior);
      expect(ours).toBeCloseTo(odds, 6);
      expect(model.score(tokens)).toBe(Math.round((1 / (1 + 2 ** -odds)) * 100) / 100);
    }
  });

  it('separates the held-out corpus slice: most spam at or above 0.9, almost no real mail', () => {
    const model = trainModel(examples);
    if (!model) throw new Error('no model');
    const spam = corpus.spam.slice(60).map((p) => model.score(postFeatures(p).tokens) ?? 0);
    const real = corpus.ham.slice(60).map((p) => model.score(postFeatures(p).tokens) ?? 0);
    expect(spam.filter((x) => x >= 0.9).length / spam.length).toBeGreaterThan(0.8);
    expect(real.filter((x) => x >= 0.9).length / real.length).toBeLessThan(0.1);
  });

  it('needs both kinds and ten examples of each before it decides', () => {
    expect(trainModel(examples.filter((e) => e.spam))).toBeUndefined();
    const few = trainModel([...examples.slice(0, 9), ...examples.slice(60, 69)]);
    expect(few?.ready).toBe(false);
    expect(trainModel(examples)?.ready).toBe(true);
  });
});

describe('the spam rules', () => {
  it('finds addresses, links and words, and names each reason', () => {
    const rules = compiledRules({
      blocked_domains: ['Spam.Example'],
      blocked_addresses: ['bad@ok.example'],
      blocked_words: ['free money', 'c++'],
      max_links: 0,
    });
    const payload = {
      email: 'Bad@OK.example',
      other: 'x@mail.spam.example',
      text: 'FREE   money in C++ at http://a.example',
    };
    expect(rules.check(payload, postFeatures(payload))).toEqual([
      'blocked-address:bad@ok.example',
      'blocked-domain:spam.example',
      'blocked-word:free money',
      'too-many-links:1',
    ]);
    expect(rules.duplicateWindowMs).toBeUndefined();
  });

  it('compiles a form’s rules once, and hashes fields in their posted order', () => {
    const rules = { reject_duplicates: true };
    expect(compiledRules(rules)).toBe(compiledRules(rules));
    expect(compiledRules(rules).duplicateWindowMs).toBe(24 * 3_600_000);
    expect(payloadHash({ a: '1', b: '2' })).not.toBe(payloadHash({ b: '2', a: '1' }));
  });
});
