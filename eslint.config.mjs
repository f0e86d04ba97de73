import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**', 'deploy/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'Read configuration through loadConfig() in shared/src/config.ts.',
        },
      ],
    },
  },
  {
    files: ['**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        exports: 'writable',
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
        __filename: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        fetch: 'readonly',
        URL: 'readonly',
        AbortController: 'readonly',
        performance: 'readonly',
        global: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off', 'no-restricted-properties': 'off' },
  },
  {
    files: [
      '**/*.test.ts',
      '**/testing/**',
      '**/main.ts',
      '**/all-in-one.ts',
      '**/cli/**',
      '**/config.ts',
      '**/service.ts',
      '**/test/**',
      'bench/**',
      'scripts/**',
    ],
    rules: { 'no-restricted-properties': 'off' },
  },
);
