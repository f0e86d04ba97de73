import type { Webhook } from '../../api-types';
import { TextField } from '../../components/ui';
import { fieldErrors } from '../../components/field-errors';

export type Tool = 'google_sheets' | 'airtable' | 'notion';
export const TOOLS: readonly (readonly [Tool, string])[] = [
  ['google_sheets', 'Google Sheets'],
  ['airtable', 'Airtable'],
  ['notion', 'Notion'],
];
export const toolName = (format: string) => TOOLS.find(([f]) => f === format)?.[1] ?? format;
export const isIntegration = (hook: Webhook) => TOOLS.some(([f]) => f === hook.format);

/** Where an integration writes, in a line: its tool, then the sheet, table or database. */
export function integrationName(hook: Webhook): string {
  const d = hook.destination ?? {};
  const where =
    hook.format === 'google_sheets'
      ? `sheet “${d.sheet}” of spreadsheet ${d.spreadsheet_id}`
      : hook.format === 'airtable'
        ? `table “${d.table}” of base ${d.base_id}`
        : `database ${d.database_id}`;
  return `${toolName(hook.format)}: ${where}`;
}

/** The settings a tool takes, as typed (the credential's field empty on a change means: keep it). */
export type Settings = Record<string, string>;

/** The body's `destination` of what was typed: blank fields left out, so a change keeps what it does not name. */
export function destinationOf(tool: Tool, settings: Settings): Record<string, string> {
  const fields = SETTINGS[tool].map((s) => s.name);
  return Object.fromEntries(fields.flatMap((f) => (settings[f]?.trim() ? [[f, settings[f]!.trim()]] : [])));
}

/** One setting of a tool: its field, what to do on the tool's side, whether it is the credential. */
interface Setting {
  name: string;
  label: string;
  help: string;
  placeholder?: string;
  optional?: boolean;
  credential?: 'text' | 'password';
}

const SETTINGS: Record<Tool, Setting[]> = {
  google_sheets: [
    {
      name: 'spreadsheet_id',
      label: 'Spreadsheet',
      placeholder: 'https://docs.google.com/spreadsheets/d/…',
      help: 'Its address, or its id.',
    },
    {
      name: 'sheet',
      label: 'Sheet',
      placeholder: 'Sheet1',
      optional: true,
      help:
        'The tab rows go to (Sheet1 when left empty). Its first row is the header: one column per field, in the ' +
        'order they are posted.',
    },
    {
      name: 'service_account_key',
      label: 'Service account key (JSON)',
      credential: 'text',
      help:
        'In Google Cloud: enable the Google Sheets API, create a service account, add a JSON key and paste the ' +
        'whole file here. Then share the spreadsheet with the service account’s e-mail as an editor. The key is ' +
        'stored encrypted and never shown again.',
    },
  ],
  airtable: [
    {
      name: 'base_id',
      label: 'Base id',
      placeholder: 'appXXXXXXXXXXXXXX',
      help: 'In the base’s address: the part that starts with app.',
    },
    {
      name: 'table',
      label: 'Table',
      help:
        'Its name or id (tbl…). Fields are written to the table’s fields of the same name; others are skipped and ' +
        'named in the delivery log.',
    },
    {
      name: 'token',
      label: 'Personal access token',
      credential: 'password',
      help:
        'Create one at airtable.com/create/tokens with the scopes data.records:write and schema.bases:read, and ' +
        'access to this base. Stored encrypted, never shown again.',
    },
  ],
  notion: [
    {
      name: 'database_id',
      label: 'Database',
      placeholder: 'https://www.notion.so/…',
      help: 'Its address (Share, Copy link), or its id. Fields are written to properties of the same name.',
    },
    {
      name: 'token',
      label: 'Integration secret',
      credential: 'password',
      help:
        'Create an internal integration at notion.so/my-integrations, then add it to the database (its ••• menu, ' +
        'Connections). Stored encrypted, never shown again.',
    },
  ],
};

/**
 * A tool's settings, each with what to do on the tool's side. `changing`: nothing is required, and the credential
 * left empty is kept.
 */
export function ToolSettings(props: {
  tool: Tool;
  settings: Settings;
  onSettings(settings: Settings): void;
  error: unknown;
  idPrefix: string;
  changing?: boolean;
}) {
  const { settings, changing } = props;
  const errors = fieldErrors(props.error, 'destination');
  return (
    <>
      {SETTINGS[props.tool].map((s) => (
        <TextField
          key={s.name}
          id={`${props.idPrefix}-${s.name}`}
          label={s.label}
          value={settings[s.name] ?? ''}
          onValue={(value) => props.onSettings({ ...settings, [s.name]: value })}
          error={errors[s.name]}
          required={!changing && !s.optional}
          placeholder={s.placeholder}
          help={s.credential && changing ? `${s.help} Leave it empty to keep the current one.` : s.help}
          {...(s.credential === 'text' ? { rows: 4, spellcheck: false } : {})}
          {...(s.credential === 'password' ? { type: 'password' } : {})}
          {...(s.credential ? { autoComplete: 'off' } : {})}
        />
      ))}
    </>
  );
}
