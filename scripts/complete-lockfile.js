#!/usr/bin/env node
// The registry reachable here lacks some platform-specific optional packages (e.g. @swc/core for
// macOS), so npm leaves them out of package-lock.json and `npm ci` then refuses the lock as out of
// sync. This adds an entry for each missing optional platform package, marked with its os/cpu, so
// `npm ci` accepts the lock and skips them on this platform as it would anyway. Run it after
// `npm install` changes the lock: `node scripts/complete-lockfile.js`.
const fs = require('node:fs');
const path = require('node:path');

const file = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
const OS = [
  ['darwin'],
  ['win32', 'windows'],
  ['linux'],
  ['android'],
  ['freebsd'],
  ['openharmony'],
  ['netbsd'],
  ['openbsd'],
  ['sunos'],
  ['aix'],
];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el', 'wasm32'];

function platformOf(name) {
  const base = name.split('/').pop();
  const parts = base.split('-');
  const os = OS.find((aliases) => aliases.some((a) => parts.includes(a)));
  const cpu =
    CPU.find(
      (c) =>
        parts.includes(c) ||
        parts.some((p) => p.startsWith(c) && /^(arm64|x64|arm|ppc64|s390x|riscv64|loong64)$/.test(c) && p === c),
    ) ?? (parts.includes('64') ? 'x64' : undefined);
  return { os: os ? [os[0]] : undefined, cpu: cpu ? [cpu] : undefined };
}

let added = 0;
for (const [where, pkg] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(pkg.optionalDependencies ?? {})) {
    const nested = `${where ? `${where}/` : ''}node_modules/${name}`;
    if (lock.packages[nested] || lock.packages[`node_modules/${name}`]) continue;
    const { os, cpu } = platformOf(name);
    if (!os && !cpu) continue;
    lock.packages[`node_modules/${name}`] = {
      version: version.replace(/^[\^~=]/, ''),
      dev: pkg.dev || undefined,
      optional: true,
      ...(os ? { os } : {}),
      ...(cpu ? { cpu } : {}),
    };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.error(`complete-lockfile: added ${added} optional platform entries`);
