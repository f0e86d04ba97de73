import shipped from './starting-model.json';
import { modelOf, type SpamModel } from './spam-classifier';

/**
 * The starting model (`spam_rules.starting_model`, on for new forms): naive Bayes weights trained on the SpamAssassin
 * public corpus by scripts/train-starting-model.js, which writes starting-model.json and prints its figures
 * (docs/spam.md, "The starting model"). It scores a form's posts until the form's own classifier is ready, and only
 * records: trained on e-mail of 2002, it called too many real form posts spam to decide alone.
 */
export const STARTING_MODEL: SpamModel = modelOf({
  prior: shipped.prior,
  weights: new Map(Object.entries(shipped.weights as Record<string, number>)),
  spamExamples: shipped.spam_examples,
  hamExamples: shipped.ham_examples,
});
