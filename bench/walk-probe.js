/**
 * Loaded with `node --require` into each service by bench/walk.js: counts the calls of every function (V8's precise
 * coverage), and on SIGUSR2 writes the functions of the project's compiled files called since the previous SIGUSR2 to
 * `$WALK_DIR/<pid>-<n>.json` (taking the coverage resets the counts).
 */
const inspector = require('node:inspector');
const fs = require('node:fs');
const path = require('node:path');

const dir = process.env.WALK_DIR;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable', () =>
    session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false }),
  );
  let taken = 0;
  process.on('SIGUSR2', () => {
    const n = ++taken;
    session.post('Profiler.takePreciseCoverage', (err, coverage) => {
      if (err) throw err;
      const called = [];
      for (const script of coverage.result) {
        if (!script.url.includes('/dist/') || script.url.includes('/node_modules/')) continue;
        for (const fn of script.functions)
          if (fn.ranges[0].count > 0) called.push(`${script.url}#${fn.functionName}@${fn.ranges[0].startOffset}`);
      }
      const file = path.join(dir, `${process.pid}-${n}.json`);
      fs.writeFileSync(`${file}.tmp`, JSON.stringify(called));
      fs.renameSync(`${file}.tmp`, file);
    });
  });
}
