import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**', 'deploy/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration through loadConfig() in shared/src/config.ts.' }],
    },
  },
  {
    files: ['**/*.test.ts', '**/testing/**', '**/main.ts', '**/all-in-one.ts', '**/cli/**', '**/config.ts', '**/service.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
);
