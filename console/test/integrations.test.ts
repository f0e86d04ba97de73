import {
  airtableStandIn,
  googleStandIn,
  notionStandIn,
  type AirtableStandIn,
  serviceAccountKey,
  type GoogleStandIn,
  type NotionStandIn,
} from '../../test/integrations/stand-ins';
import { checkView, useOwnerConsole } from './owner';

/**
 * Connecting tools in the console, in Chromium over the real stack, the tools' APIs being local stand-ins: Google
 * Sheets connected and checked, Notion refused at its field then connected, its token changed to one Notion refuses
 * and the check saying so, Airtable connected and checked; integrations apart from the webhooks.
 */
jest.setTimeout(120_000);

const SPREADSHEET = '1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms';
const DATABASE = '1429989f-e8ac-4eff-bc8f-57f56486db54';
const TOKEN = `ntn_${'5'.repeat(46)}`;
const KEY = serviceAccountKey('forms@acme-project.iam.gserviceaccount.com');
const BASE = 'appQ4mXw8rT2zL9kP';
const PAT = `pat${'a'.repeat(14)}.${'0'.repeat(64)}`;
const apis = {} as { google: GoogleStandIn; notion: NotionStandIn; airtable: AirtableStandIn };

beforeAll(async () => {
  [apis.google, apis.notion, apis.airtable] = await Promise.all([
    googleStandIn(),
    notionStandIn({ databaseId: DATABASE, token: TOKEN }),
    airtableStandIn({ baseId: BASE, token: PAT }),
  ]);
  apis.airtable.tables.push({ id: 'tblLeads0000000001', name: 'Leads', fields: [], records: [] });
  apis.google.register(KEY);
  apis.google.spreadsheets.set(SPREADSHEET, {
    sheets: new Map([['Leads', []]]),
    sharedWith: new Set([KEY.client_email]),
  });
});
afterAll(() => Promise.all([apis.google?.close(), apis.notion?.close(), apis.airtable?.close()]));

const c = useOwnerConsole(() => ({
  GOOGLE_OAUTH_TOKEN_URL: `${apis.google.url}/token`,
  GOOGLE_SHEETS_API_URL: apis.google.url,
  NOTION_API_URL: apis.notion.url,
  AIRTABLE_API_URL: apis.airtable.url,
}));

describe('integrations in the console', () => {
  it('connects Google Sheets and checks that the service account can write there', async () => {
    const { page, stack, account } = c;
    const res = await fetch(`${stack.url}/v1/forms`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.managementKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Leads' }),
    });
    const form = (await res.json()) as { id: string };
    await page.goto(`${stack.url}/console/forms/${form.id}/integrations`);
    await page.getByText('No tool connected yet.').waitFor();
    await page
      .getByLabel('Spreadsheet', { exact: true })
      .fill(`https://docs.google.com/spreadsheets/d/${SPREADSHEET}/edit`);
    await page.getByLabel('Sheet', { exact: true }).fill('Leads');
    await page.getByLabel('Service account key (JSON)').fill(JSON.stringify(KEY, null, 2));
    await page.getByRole('button', { name: 'Connect Google Sheets' }).click();
    await page.getByRole('status').filter({ hasText: 'Google Sheets connected.' }).waitFor();
    const card = page.getByRole('listitem').filter({ hasText: `sheet “Leads” of spreadsheet ${SPREADSHEET}` });
    await card.getByText(KEY.client_email).waitFor();
    await card.getByRole('button', { name: 'Check connection' }).click();
    await card.getByRole('status').filter({ hasText: 'Connection check: succeeded · status 200' }).waitFor();
    expect(await card.getByRole('link', { name: 'Open in Google Sheets' }).getAttribute('href')).toBe(
      `https://docs.google.com/spreadsheets/d/${SPREADSHEET}/edit#sheet=Leads`,
    );
    expect(await page.content()).not.toContain(KEY.private_key.split('\n')[1]);
    await checkView(page, 'integrations', /^Integrations · Leads · Intake console$/);

    await card.getByRole('link', { name: 'Delivery log' }).click();
    await page
      .getByRole('heading', { name: `Delivery log: Google Sheets: sheet “Leads” of spreadsheet ${SPREADSHEET}` })
      .waitFor();
    const tab = page.getByRole('navigation', { name: 'Form' }).getByRole('link', { name: 'Integrations' });
    expect(await tab.getAttribute('aria-current')).toBe('page');
    await page.getByText('webhook.test').click(); // opens the check's delivery, its attempt and the note it left
    await page.getByText('Connected: the service account can read “Leads” (0 columns in its header row)').waitFor();
    await checkView(page, 'integration-log', /^Delivery log · Leads · Intake console$/);
    await page.getByRole('link', { name: 'Integrations', exact: true }).first().click();
    await page.getByRole('heading', { name: 'Integrations', level: 2 }).waitFor();
  });

  it('says at its field what Notion setting is wrong, and what Notion answered a refused token', async () => {
    const { page } = c;
    await page.getByLabel('Tool', { exact: true }).selectOption({ label: 'Notion' });
    await page.getByLabel('Database', { exact: true }).fill('not a database');
    await page.getByLabel('Integration secret').fill(TOKEN);
    await page.getByRole('button', { name: 'Connect Notion' }).click();
    await page.getByText('Database: It is not a database id or a database’s address.').waitFor();
    await page
      .getByLabel('Database', { exact: true })
      .fill(`https://www.notion.so/acme/Leads-${DATABASE.replace(/-/g, '')}?v=1`);
    await page.getByRole('button', { name: 'Connect Notion' }).click();
    await page.getByRole('status').filter({ hasText: 'Notion connected.' }).waitFor();

    const card = page.getByRole('listitem').filter({ hasText: `Notion: database ${DATABASE}` });
    await card.getByRole('button', { name: 'Change connection' }).click();
    expect(await card.getByLabel('Integration secret').inputValue()).toBe('');
    await card.getByLabel('Integration secret').fill(`ntn_${'0'.repeat(46)}`);
    await card.getByRole('button', { name: 'Save connection' }).click();
    await page.getByRole('status').filter({ hasText: 'Notion connection changed.' }).waitFor();
    await card.getByRole('button', { name: 'Check connection' }).click();
    await card
      .getByRole('status')
      .filter({
        hasText:
          /^Connection check: failed · status 401 · \d+ ms · Notion answered 401: unauthorized: API token is invalid\./,
      })
      .waitFor();
    await checkView(page, 'integrations-refused', /^Integrations · Leads · Intake console$/);

    await page.getByLabel('Tool', { exact: true }).selectOption({ label: 'Airtable' });
    await page.getByLabel('Base id', { exact: true }).fill(BASE);
    await page.getByLabel('Table', { exact: true }).fill('Leads');
    await page.getByLabel('Personal access token', { exact: true }).fill(PAT);
    await page.getByRole('button', { name: 'Connect Airtable' }).click();
    await page.getByRole('status').filter({ hasText: 'Airtable connected.' }).waitFor();
    const airtable = page.getByRole('listitem').filter({ hasText: `Airtable: table “Leads” of base ${BASE}` });
    await airtable.getByRole('button', { name: 'Check connection' }).click();
    await airtable.getByRole('status').filter({ hasText: 'Connection check: succeeded · status 200' }).waitFor();

    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByText('No webhooks yet').waitFor();
    // The refusals above are answers the page shows; no script failed.
    expect(c.consoleErrors.filter((e) => !e.startsWith('Failed to load resource'))).toEqual([]);
  });
});
