import { readFileSync } from 'node:fs';
import { settingsSchema } from '@intake/shared/base';

// The generator is the script `npm run docs:config` runs; here it renders the schema from the source.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { renderConfiguration, TARGET } = require('../scripts/configuration-doc.js') as {
  renderConfiguration(schema: unknown): string;
  TARGET: string;
};

describe('docs/configuration.md', () => {
  it('is what the settings schema renders', () => {
    const committed = readFileSync(TARGET, 'utf8');
    if (committed !== renderConfiguration(settingsSchema))
      throw new Error(
        'docs/configuration.md differs from the settings in shared/src/base/config.ts: run `npm run docs:config`',
      );
  });

  it('lists every setting, each with a description', () => {
    const committed = readFileSync(TARGET, 'utf8');
    for (const [name, setting] of Object.entries(settingsSchema.properties)) {
      expect(setting.description ?? '').not.toBe('');
      expect(committed).toContain(`| \`${name}\` |`);
    }
  });

  it('refuses a setting that has no description', () => {
    const { PORT, ...others } = settingsSchema.properties;
    const bare = { ...settingsSchema, properties: { ...others, PORT: { ...PORT, description: undefined } } };
    expect(() => renderConfiguration(bare)).toThrow('PORT has no description');
  });
});
