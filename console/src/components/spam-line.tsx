import type { SubmissionDetail } from '../api-types';

/** The shipped patterns of known spam (ingest's judge/known-spam.ts), in words. */
const KNOWN_SPAM: Record<string, string> = {
  'crypto-profit': 'a crypto profit pitch',
  'earnings-claim': 'an earnings claim',
  'seo-pitch': 'an SEO pitch',
  pills: 'pills',
  casino: 'a casino',
  prize: 'a prize',
  'make-money': 'a make-money pitch',
  'html-link': 'an HTML link',
};

/** A kind of reason (a reason up to its colon), in words, as the spam view counts them. */
const KINDS: Record<string, string> = {
  honeypot: 'the honeypot',
  'challenge-unavailable': 'the bot challenge unavailable',
  'marked-by-owner': 'marked by you',
  'blocked-domain': 'blocked domains',
  'blocked-address': 'blocked addresses',
  'disposable-domain': 'disposable addresses',
  'blocked-word': 'blocked words',
  'known-spam': 'known spam',
  'link-in-name': 'a link in a name',
  'too-many-links': 'too many links',
  'missing-field': 'a missing field',
  duplicate: 'duplicates',
  classifier: 'the classifier',
};
export const spamKindText = (kind: string) => KINDS[kind] ?? kind;

/** A reason the spam layers record, in words. */
export function spamReasonText(reason: string): string {
  const at = reason.indexOf(':');
  const kind = at === -1 ? reason : reason.slice(0, at);
  const detail = at === -1 ? '' : reason.slice(at + 1);
  switch (kind) {
    case 'honeypot':
      return 'the hidden honeypot field was filled';
    case 'challenge-unavailable':
      return 'the bot challenge could not be checked';
    case 'marked-by-owner':
      return 'marked as spam by you';
    case 'blocked-domain':
      return `blocked domain ${detail}`;
    case 'blocked-address':
      return `blocked address ${detail}`;
    case 'disposable-domain':
      return `disposable address (${detail})`;
    case 'blocked-word':
      return `blocked word “${detail}”`;
    case 'too-many-links':
      return `${detail} links`;
    case 'missing-field':
      return `no value for ${detail}`;
    case 'duplicate':
      return 'the same fields were posted recently';
    case 'classifier':
      return `the classifier (${detail})`;
    case 'starting-model':
      return `the starting classifier (${detail})`;
    case 'link-in-name':
      return `a link in the ${detail} field`;
    case 'known-spam':
      return `known spam: ${KNOWN_SPAM[detail] ?? detail}`;
    default:
      return reason;
  }
}

/**
 * The spam filter's line on a submission: its score, and why it is spam, or (a received post with
 * reasons: shadow mode, or an owner's rescue) what would have caught it. Nothing when there is nothing to say.
 */
export function SpamLine({
  submission: s,
}: {
  submission: Pick<SubmissionDetail, 'status' | 'spam_score' | 'spam_reasons'>;
}) {
  if (s.spam_score === null && s.spam_reasons.length === 0) return null;
  const score = s.spam_score === null ? 'not scored' : s.spam_score.toFixed(2);
  const reasons = s.spam_reasons.map(spamReasonText).join('; ');
  let verdict = '';
  if (s.spam_reasons.length)
    verdict = s.status === 'spam' ? ` · caught by: ${reasons}` : ` · would have been caught by: ${reasons}`;
  return (
    <p class="muted spam-line" data-testid="spam-line">
      Spam score {score}
      {verdict}
    </p>
  );
}
