// `@intake/shared/register`: starts OpenTelemetry before anything else loads (see src/register.ts).
require('./dist/register');
