import { execFile } from 'node:child_process';
import path from 'node:path';
import { useStarted } from '@intake/shared/testing';
import { api, startManagement } from './helpers';

/**
 * The web console (the `@intake/console` package) is typed by a committed copy of the OpenAPI document
 * (console/openapi.json), from which its build generates types (console/src/openapi.d.ts): the copy must be what
 * GET /openapi serves today. With OPENAPI_WRITE=1 (`npm run openapi:write -w services/management`) the test rewrites
 * it instead.
 */
const SCRIPT = path.join(path.dirname(require.resolve('@intake/console/package.json')), 'openapi.mjs');

/** Runs console/openapi.mjs with the served document on stdin; resolves to its exit code and output. */
function runScript(mode: 'check' | 'write', served: unknown): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [SCRIPT, mode], { cwd: path.dirname(SCRIPT) }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, output: `${stdout}${stderr}`.trim() }),
    );
    child.stdin?.end(JSON.stringify(served));
  });
}

describe("the console's copy of the OpenAPI document", () => {
  // Configuration defaults (PUBLIC_BASE_URL, PROBLEMS_URL), so the document does not depend on the test's port.
  const ctx = useStarted(() => startManagement());

  it('is what GET /openapi serves', async () => {
    const served = await api(ctx.url)('GET', '/openapi');
    expect(served.status).toBe(200);
    const mode = process.env['OPENAPI_WRITE'] ? 'write' : 'check';
    const result = await runScript(mode, served.body);
    if (mode === 'write') console.log(result.output);
    // On failure the output says where the copy differs and what to run.
    expect(result).toEqual({ code: 0, output: mode === 'write' ? expect.stringMatching(/^wrote /) : '' });
  });
});
