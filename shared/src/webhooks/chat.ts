import { INTEGRATION_FORMATS, type IntegrationFormat } from './integrations';

/** A chat service whose incoming webhooks get a readable message. */
export type ChatFormat = 'slack' | 'discord' | 'teams';
const CHAT_FORMATS: readonly ChatFormat[] = ['slack', 'discord', 'teams'];

/**
 * What a webhook sends: Intake's signed envelope (`standard`), a message in a chat service's incoming-webhook shape,
 * or (an integration) a row, record or page written through a tool's API.
 */
export type WebhookFormat = 'standard' | ChatFormat | IntegrationFormat;
export const WEBHOOK_FORMATS: readonly WebhookFormat[] = ['standard', ...CHAT_FORMATS, ...INTEGRATION_FORMATS];

export function isChatFormat(format: string): format is ChatFormat {
  return (CHAT_FORMATS as readonly string[]).includes(format);
}

/**
 * A chat webhook's URL as Intake shows and stores it in the clear: its scheme and host, and of its path only `…` and
 * the last four characters. Slack, Discord and Teams put the webhook's secret in the path (and Teams' workflows in
 * the query): whoever has the URL posts to the channel, so the whole URL is sealed with SECRETS_KEY (in
 * `webhooks.credential`, as an integration's credential) and never shown again.
 */
export function shownChatUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return '…';
  }
  const rest = `${url.pathname}${url.search}`;
  return `${url.protocol}//${url.host}/…${rest.length >= 16 ? rest.slice(-4) : ''}`;
}

/** What a chat message tells: the form (with its client), the fields in their posted order, the files, a link to the console. */
export interface ChatContext {
  /** The envelope type (`submission.created`, `webhook.test`). */
  type: string;
  data: Record<string, unknown>;
  formName: string;
  /** `PUBLIC_BASE_URL`, for the console link. */
  baseUrl: string;
}

interface Message {
  title: string;
  fields: [string, string][];
  link: string | undefined;
}

/** Longest field value a message carries (each service has its own, lower limits below). */
const VALUE_MAX = 1000;
/** Most fields a message lists; the rest are counted. */
const FIELDS_MAX = 20;

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The form as a message names it: in quotes, with its client (the envelope's `project`) after it. */
function formOf(ctx: ChatContext): string {
  const project = ctx.data['project'] as { name?: unknown } | null | undefined;
  return `"${ctx.formName}"${typeof project?.name === 'string' ? ` — ${project.name}` : ''}`;
}

/** The readable content of a delivery, whatever the service. */
function messageOf(ctx: ChatContext): Message {
  const { data } = ctx;
  if (ctx.type === 'webhook.test')
    return { title: `Test message from Intake for ${formOf(ctx)}`, fields: [], link: undefined };
  const payload = (data['payload'] ?? {}) as Record<string, unknown>;
  const entries = Object.entries(payload).map(([k, v]): [string, string] => [
    cut(k, 200),
    cut(typeof v === 'string' ? v : JSON.stringify(v), VALUE_MAX),
  ]);
  const fields = entries.slice(0, FIELDS_MAX);
  if (entries.length > FIELDS_MAX) fields.push(['…', `${entries.length - FIELDS_MAX} more fields`]);
  const files = Array.isArray(data['files']) ? (data['files'] as { filename?: unknown }[]) : [];
  if (files.length > 0) fields.push(['Files', cut(files.map((f) => String(f.filename)).join(', '), VALUE_MAX)]);
  const id = typeof data['submission_id'] === 'string' ? data['submission_id'] : undefined;
  return {
    title: `New submission to ${formOf(ctx)}`,
    fields,
    link: id ? `${ctx.baseUrl}/console/submissions/${encodeURIComponent(id)}` : undefined,
  };
}

/** Slack's mrkdwn: `&`, `<` and `>` are escaped, so no value can mention a channel or forge a link. */
const slackEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Slack incoming webhooks: `text` (the notification's fallback) and Block Kit `blocks`. */
function slack(m: Message): Record<string, unknown> {
  const lines = m.fields.map(([k, v]) => `*${slackEscape(k)}*\n${slackEscape(v)}`);
  const blocks: Record<string, unknown>[] = [
    { type: 'header', text: { type: 'plain_text', text: cut(m.title, 150), emoji: false } },
  ];
  // A section's text holds at most 3,000 characters: fields are grouped into as few sections as fit.
  let section = '';
  for (const line of lines) {
    if (section && section.length + line.length + 2 > 2900) {
      blocks.push({ type: 'section', text: { type: 'mrkdwn', text: section } });
      section = '';
    }
    section = section ? `${section}\n\n${cut(line, 2900)}` : cut(line, 2900);
  }
  if (section) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: section } });
  if (m.link) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `<${m.link}|View in the console>` } });
  return { text: slackEscape(m.title), blocks: blocks.slice(0, 50) };
}

/**
 * Discord's markdown: a visitor's text is escaped with backslashes (which Discord honours), so it can make no masked
 * link (`[text](url)`), no formatting, no heading, quote or list. A bare URL stays a URL, as in Slack.
 */
const discordEscape = (s: string) => s.replace(/[\\*_~`|[\]<]/g, '\\$&').replace(/^([#>-])/gm, '\\$1');

/**
 * Adaptive Cards' markdown (Teams) has no escape: a visitor's masked link is broken with a zero-width space between
 * its two halves (`]\u200b(`), which no markdown reads as a link and nobody sees. A bare URL stays a URL, as in Slack.
 */
const teamsEscape = (s: string) => s.replace(/\](\s*)\(/g, ']\u200b$1(');

/**
 * Discord webhooks: one embed (fields ≤ 25, names ≤ 256, values ≤ 1,024, all its text ≤ 6,000), and
 * no mention in a value ever pings anyone.
 */
function discord(m: Message): Record<string, unknown> {
  const title = cut(discordEscape(m.title), 256);
  let budget = 5900 - title.length;
  const fields: { name: string; value: string }[] = [];
  for (const [k, v] of m.fields.slice(0, 24)) {
    const name = cut(discordEscape(k), 256);
    const room = Math.min(1024, budget - name.length);
    if (room < 2) break;
    const value = v ? cut(discordEscape(v), room) : '-';
    budget -= name.length + value.length;
    fields.push({ name, value });
  }
  if (fields.length < m.fields.length) fields.push({ name: '…', value: 'more in the console' });
  return {
    content: cut(discordEscape(m.title), 2000),
    embeds: [{ title, ...(m.link ? { url: m.link } : {}), fields }],
    allowed_mentions: { parse: [] },
  };
}

/** Microsoft Teams incoming webhooks (and Workflows): a message with one Adaptive Card. */
function teams(m: Message): Record<string, unknown> {
  const body: Record<string, unknown>[] = [
    { type: 'TextBlock', text: teamsEscape(m.title), weight: 'Bolder', size: 'Medium', wrap: true },
  ];
  if (m.fields.length > 0)
    body.push({
      type: 'FactSet',
      facts: m.fields.map(([k, v]) => ({ title: teamsEscape(k), value: teamsEscape(v) })),
    });
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body,
          ...(m.link ? { actions: [{ type: 'Action.OpenUrl', title: 'View in the console', url: m.link }] } : {}),
        },
      },
    ],
  };
}

/** The body a chat-format webhook posts for a delivery. */
export function chatBody(format: ChatFormat, ctx: ChatContext): Record<string, unknown> {
  const message = messageOf(ctx);
  if (format === 'slack') return slack(message);
  if (format === 'discord') return discord(message);
  return teams(message);
}
