import { APIResponseError, Client } from '@notionhq/client';
import { LRUCache } from 'lru-cache';
import { formAndProject } from '@intake/shared/contracts';
import { type NotionDestination } from '@intake/shared/webhooks';
import { retryAfterMs } from '../send/attempt';
import {
  credentialKey,
  fieldsByName,
  IntegrationError,
  submissionRow,
  type Integration,
  type IntegrationAttempt,
} from './attempt';

type Property = { id: string; type: string; name?: string };
interface Schema {
  dataSourceId: string;
  title: string;
  properties: Record<string, Property>;
}

/** A database's data source and its properties, kept a minute per database and token. */
const schemas = new LRUCache<string, Schema>({ max: 500, ttl: 60_000 });

/** A Notion text value: at most 2,000 characters a text object, 100 objects. */
function richText(text: string): { type: 'text'; text: { content: string } }[] {
  const parts: { type: 'text'; text: { content: string } }[] = [];
  for (let i = 0; i < text.length && parts.length < 100; i += 2000)
    parts.push({ type: 'text', text: { content: text.slice(i, i + 2000) } });
  return parts;
}

/** A field's value as a property of the type the database gives it; undefined when it cannot be one. */
function propertyValue(type: string, value: string): Record<string, unknown> | undefined {
  const trimmed = value.trim();
  switch (type) {
    case 'title':
      return { title: richText(value) };
    case 'rich_text':
      return { rich_text: richText(value) };
    case 'email':
    case 'phone_number':
    case 'url':
      return trimmed ? { [type]: trimmed.slice(0, 2000) } : undefined;
    case 'number':
      return trimmed !== '' && Number.isFinite(Number(trimmed)) ? { number: Number(trimmed) } : undefined;
    case 'checkbox':
      return { checkbox: /^(true|on|yes|1|checked)$/i.test(trimmed) };
    case 'select':
      // A select's option may hold no comma.
      return trimmed ? { select: { name: trimmed.replace(/,/g, ' ').slice(0, 100) } } : undefined;
    case 'multi_select':
      return {
        multi_select: trimmed
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean)
          .slice(0, 100)
          .map((name) => ({ name: name.slice(0, 100) })),
      };
    case 'date':
      return /^\d{4}-\d{2}-\d{2}/.test(trimmed) && !Number.isNaN(Date.parse(trimmed))
        ? { date: { start: trimmed } }
        : undefined;
    default:
      return undefined;
  }
}

function client(attempt: IntegrationAttempt): Client {
  return new Client({
    auth: attempt.credential,
    baseUrl: attempt.apis.NOTION_API_URL,
    timeoutMs: attempt.timeoutMs,
    retry: false,
    // What went wrong is the delivery log's to say; the client's own log could carry request details.
    logger: () => undefined,
  });
}

/** What the owner reads in the delivery log when Notion refuses. */
function refusal(err: unknown): never {
  if (!APIResponseError.isAPIResponseError(err)) throw err;
  const advice =
    err.status === 401
      ? ' (Notion refused the token: connect the integration again with a current integration secret)'
      : err.status === 404 || err.status === 403
        ? ' (share the database with the integration: its ••• menu, Connections)'
        : '';
  const headers = err.headers as { get?(name: string): string | null } | undefined;
  throw new IntegrationError(
    err.status,
    `Notion answered ${err.status}: ${err.code}: ${err.message}${advice}`,
    retryAfterMs(headers?.get?.('retry-after'), new Date()),
    err.body.slice(0, 1024),
  );
}

async function schemaOf(attempt: IntegrationAttempt, notion: Client): Promise<Schema> {
  const { database_id: databaseId } = attempt.destination as NotionDestination;
  const key = `${credentialKey(attempt.credential)}:${databaseId}`;
  const known = schemas.get(key);
  if (known) return known;
  const database = (await notion.databases.retrieve({ database_id: databaseId }).catch(refusal)) as {
    data_sources?: { id: string }[];
  };
  const dataSourceId = database.data_sources?.[0]?.id;
  if (!dataSourceId) throw new IntegrationError(404, 'Notion: the database has no data source to add pages to');
  const source = (await notion.dataSources.retrieve({ data_source_id: dataSourceId }).catch(refusal)) as {
    properties: Record<string, Property>;
  };
  const title = Object.entries(source.properties).find(([, p]) => p.type === 'title')?.[0] ?? 'Name';
  const schema = { dataSourceId, title, properties: source.properties };
  schemas.set(key, schema);
  return schema;
}

/**
 * Notion: one page per submission in the database, each field written to the property of the same name (exactly, else
 * ignoring case) as that property's type takes it (text, e-mail, phone, URL, number, checkbox, select, multi-select,
 * date); a form in a project writes its client to a `Project` property. The title is the field of the title
 * property's name, else the form's name (with its client's) and the submission's id. A field
 * with no property, or whose value the property's type cannot take, is skipped and named in the delivery log.
 */
export const notion: Integration = {
  async check(attempt) {
    const schema = await schemaOf(attempt, client(attempt));
    return `Connected: the integration can add pages to the database (${Object.keys(schema.properties).length} properties)`;
  },

  async write(attempt) {
    const api = client(attempt);
    const schema = await schemaOf(attempt, api);
    const row = submissionRow(attempt.data);
    const { values: properties, skipped } = fieldsByName(row, Object.keys(schema.properties), (name, value) =>
      propertyValue(schema.properties[name]!.type, value),
    );
    properties[schema.title] ??= { title: richText(`${formAndProject(attempt.formName, row.project)}: ${row.id}`) };
    const page = (await api.pages
      .create({
        parent: { type: 'data_source_id', data_source_id: schema.dataSourceId },
        properties: properties as never,
      })
      .catch(refusal)) as { id: string };
    return `Created page ${page.id}${skipped.length > 0 ? `; skipped fields: ${skipped.join(', ')}` : ''}`;
  },
};
