/** The part of wink-naive-bayes-text-classifier (which ships no types) the spam classifier uses. */
declare module 'wink-naive-bayes-text-classifier' {
  interface NaiveBayesTextClassifier {
    defineConfig(config: { considerOnlyPresence?: boolean; smoothingFactor?: number }): boolean;
    /** Without preparation tasks the input is taken as its tokens. */
    learn(tokens: string[], label: string): boolean;
    /** Throws with fewer than two labels or a vocabulary under 10 tokens. */
    consolidate(): boolean;
    /** log2 odds of each label, highest first; `[['unknown', 0]]` when no token is known. */
    computeOdds(tokens: string[]): [label: string, odds: number][];
    /** `[config, samples per label, token counts per label, words per label, vocabulary]` as JSON. */
    exportJSON(): string;
  }
  function naiveBayesTextClassifier(): NaiveBayesTextClassifier;
  export = naiveBayesTextClassifier;
}
