import type http from 'node:http';
import { eventually, useStarted } from '@intake/shared/testing';
import { marked } from 'marked';
import { chatBody, type ChatFormat } from '@intake/shared/webhooks';
import { formWithHook, receiver, startDelivery, submit, type Received } from './helpers';

const ctx = useStarted(() => startDelivery({ PUBLIC_BASE_URL: 'https://intake.example' }));

/**
 * Local stand-ins for each service's incoming webhook: each checks the shape its service documents
 * (the fields it requires and the limits it enforces) and answers as that service does, a 400 with
 * the reason when the message would be refused.
 */
const CHECKS: Record<ChatFormat, (body: Record<string, unknown>) => string | undefined> = {
  // https://api.slack.com/messaging/webhooks, https://api.slack.com/reference/block-kit/blocks
  slack(body) {
    if (typeof body['text'] !== 'string' || body['text'] === '') return 'no_text';
    const blocks = body['blocks'] as Record<string, unknown>[];
    if (!Array.isArray(blocks) || blocks.length > 50) return 'invalid_blocks';
    for (const block of blocks) {
      const text = block['text'] as { type?: string; text?: string } | undefined;
      if (block['type'] === 'header' && !(text?.type === 'plain_text' && (text.text?.length ?? 0) <= 150))
        return 'invalid_blocks: header';
      if (block['type'] === 'section' && !(text?.type === 'mrkdwn' && (text.text?.length ?? 0) <= 3000))
        return 'invalid_blocks: section';
      if (block['type'] !== 'header' && block['type'] !== 'section') return 'invalid_blocks: type';
    }
    return undefined;
  },
  // https://discord.com/developers/docs/resources/webhook#execute-webhook, .../message#embed-object-embed-limits
  discord(body) {
    const embeds = body['embeds'] as { title?: string; url?: string; fields?: { name: string; value: string }[] }[];
    if (typeof body['content'] !== 'string' || body['content'].length > 2000) return 'content';
    if (!Array.isArray(embeds) || embeds.length > 10) return 'embeds';
    for (const e of embeds) {
      const fields = e.fields ?? [];
      if ((e.title?.length ?? 0) > 256 || fields.length > 25) return 'embed limits';
      if (fields.some((f) => !f.name || !f.value || f.name.length > 256 || f.value.length > 1024)) return 'field';
      const total = (e.title?.length ?? 0) + fields.reduce((n, f) => n + f.name.length + f.value.length, 0);
      if (total > 6000) return 'embed total';
      if (e.url !== undefined && !/^https?:\/\//.test(e.url)) return 'url';
    }
    const mentions = body['allowed_mentions'] as { parse?: unknown[] } | undefined;
    if (!Array.isArray(mentions?.parse) || mentions.parse.length > 0) return 'mentions would ping';
    return undefined;
  },
  // https://learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using
  teams(body) {
    const attachments = body['attachments'] as { contentType?: string; content?: Record<string, unknown> }[];
    if (body['type'] !== 'message' || !Array.isArray(attachments) || attachments.length !== 1) return 'message';
    const [card] = attachments;
    if (card!.contentType !== 'application/vnd.microsoft.card.adaptive') return 'contentType';
    const content = card!.content ?? {};
    if (content['type'] !== 'AdaptiveCard' || typeof content['version'] !== 'string') return 'card';
    if (!Array.isArray(content['body'])) return 'body';
    return undefined;
  },
};

/** A stand-in for `format`'s service: answers 400 with the reason when the shape is wrong. */
function chatService(format: ChatFormat) {
  return receiver((req: Received, _n: number, res: http.ServerResponse) => {
    let problem: string | undefined;
    try {
      problem = CHECKS[format](JSON.parse(req.body));
    } catch {
      problem = 'invalid_payload';
    }
    res.statusCode = problem ? 400 : format === 'discord' ? 204 : 200;
    res.end(problem ?? (format === 'slack' ? 'ok' : ''));
  });
}

async function deliverTo(format: ChatFormat, payload: Record<string, string>) {
  const service = await chatService(format);
  try {
    const { accountId, formId } = await formWithHook(ctx.platform, { url: `${service.url}/hook`, format });
    const event = await submit(ctx.platform, { accountId, formId, payload });
    const delivery = await eventually(() =>
      ctx.platform
        .db('deliveries')
        .where({ submission_id: event.submission_id })
        .whereIn('status', ['succeeded', 'retrying', 'failed'])
        .first(),
    );
    return {
      delivery,
      headers: service.requests[0]!.headers,
      body: JSON.parse(service.requests[0]!.body),
      link: `https://intake.example/console/submissions/${event.submission_id}`,
    };
  } finally {
    await service.close();
  }
}

const POST = { name: 'Ada <!channel> @everyone', email: 'ada@example.com', message: 'Line one\nLine two' };

describe('chat formats: each service gets a message of the shape it documents', () => {
  it('slack: a header, the fields in posted order (escaped, no mention), and the console link', async () => {
    const { delivery, body, link } = await deliverTo('slack', POST);
    expect(delivery.status).toBe('succeeded');
    expect(body.text).toBe('New submission to "Test form"');
    const text = body.blocks.map((b: { text: { text: string } }) => b.text.text).join('\n');
    expect(text).toContain('*name*\nAda &lt;!channel&gt; @everyone');
    expect(text.indexOf('*name*')).toBeLessThan(text.indexOf('*email*'));
    expect(text.indexOf('*email*')).toBeLessThan(text.indexOf('*message*'));
    expect(text).toContain(`<${link}|View in the console>`);
  });

  it('discord: one embed with the fields in posted order, linked to the console, pinging nobody', async () => {
    const { delivery, body, link } = await deliverTo('discord', POST);
    expect(delivery.status).toBe('succeeded');
    expect(body.embeds[0].title).toBe('New submission to "Test form"');
    expect(body.embeds[0].url).toBe(link);
    expect(body.embeds[0].fields).toEqual([
      { name: 'name', value: 'Ada \\<!channel> @everyone' },
      { name: 'email', value: 'ada@example.com' },
      { name: 'message', value: 'Line one\nLine two' },
    ]);
  });

  it('discord: a long submission stays within the embed limits', async () => {
    const payload = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`field_${i}`, 'x'.repeat(2000)]));
    const { delivery } = await deliverTo('discord', payload);
    expect(delivery.status).toBe('succeeded');
  });

  it('teams: an Adaptive Card with the fields as facts in posted order and an action to the console', async () => {
    const { delivery, body, link } = await deliverTo('teams', POST);
    expect(delivery.status).toBe('succeeded');
    const card = body.attachments[0].content;
    expect(card.body[0].text).toBe('New submission to "Test form"');
    expect(card.body[1]).toEqual({
      type: 'FactSet',
      facts: [
        { title: 'name', value: 'Ada <!channel> @everyone' },
        { title: 'email', value: 'ada@example.com' },
        { title: 'message', value: 'Line one\nLine two' },
      ],
    });
    expect(card.actions).toEqual([{ type: 'Action.OpenUrl', title: 'View in the console', url: link }]);
  });

  it('slack: a long submission stays within the block limits', async () => {
    const payload = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`field_${i}`, 'y'.repeat(2000)]));
    const { delivery } = await deliverTo('slack', payload);
    expect(delivery.status).toBe('succeeded');
  });
});

/**
 * The links a markdown renderer (marked: CommonMark with GFM) finds in `text` whose text is not their address: masked
 * links and images, which show one thing and lead elsewhere (a bare URL is a link in every chat service, and in Slack).
 */
function maskedLinksIn(text: string): [string, string][] {
  const found: [string, string][] = [];
  marked.walkTokens(marked.lexer(text), (token) => {
    if ((token.type === 'link' || token.type === 'image') && token.text !== token.href)
      found.push([token.text, token.href]);
  });
  return found;
}

describe('chat formats: posted as chat messages, not signed envelopes', () => {
  /** The headers a delivery of `format` arrives with at a real receiver on loopback. */
  async function headersOf(format: 'standard' | ChatFormat) {
    const target = await receiver();
    try {
      const { accountId, formId } = await formWithHook(ctx.platform, { url: `${target.url}/hook`, format });
      await submit(ctx.platform, { accountId, formId, payload: { name: 'Ada' } });
      const [request] = await eventually(() => target.requests.length === 1 && target.requests);
      return request!.headers;
    } finally {
      await target.close();
    }
  }
  const envelopeHeaders = (headers: Record<string, unknown>) =>
    Object.keys(headers).filter((name) => name.startsWith('x-service-') || name.startsWith('webhook-'));

  it.each(['slack', 'discord', 'teams'] as const)('%s gets no x-service-* or webhook-* header', async (format) => {
    const headers = await headersOf(format);
    expect(envelopeHeaders(headers)).toEqual([]);
    expect(headers['user-agent']).toBe('Intake-Chat/1');
    expect(headers['content-type']).toBe('application/json');
  });

  it('a standard webhook on the same receiver still gets the signed envelope’s headers', async () => {
    const headers = await headersOf('standard');
    expect(envelopeHeaders(headers).sort()).toEqual([
      'webhook-id',
      'webhook-signature',
      'webhook-timestamp',
      'x-service-attempt',
      'x-service-delivery',
      'x-service-event',
      'x-service-signature',
    ]);
    expect(headers['user-agent']).toBe('Service-Webhooks/1');
  });
});

describe('chat formats: a visitor’s markdown', () => {
  const ctx = {
    type: 'submission.created',
    formName: 'Contact',
    baseUrl: 'https://intake.example',
    data: {
      submission_id: 'sub_1',
      payload: {
        '[name](https://evil.example/n)': '[Reset your password](https://evil.example/login) now',
        note: '**urgent** [x] (y) ![img](https://evil.example/i.png)',
      },
      files: [],
    },
  };

  it('makes no link in a Discord or Teams message (Slack escapes it too)', () => {
    const discord = chatBody('discord', ctx) as { embeds: { fields: { name: string; value: string }[] }[] };
    const teams = chatBody('teams', ctx) as {
      attachments: { content: { body: { facts?: { title: string; value: string }[] }[] } }[];
    };
    const texts = [
      ...discord.embeds[0]!.fields.flatMap((f) => [f.name, f.value]),
      ...(teams.attachments[0]!.content.body[1]!.facts ?? []).flatMap((f) => [f.title, f.value]),
    ];
    expect(texts).toHaveLength(8);
    for (const text of texts) expect({ text, links: maskedLinksIn(text) }).toEqual({ text, links: [] });
    // What the visitor wrote is still what a person reads.
    expect(discord.embeds[0]!.fields[0]!.value.replace(/\\/g, '')).toBe(
      '[Reset your password](https://evil.example/login) now',
    );
    expect(teams.attachments[0]!.content.body[1]!.facts![0]!.value.replace(/\u200b/g, '')).toBe(
      '[Reset your password](https://evil.example/login) now',
    );
  });
});
