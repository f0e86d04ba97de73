/**
 * The processes a test run started, found from the operating system's side (Linux's /proc), so that a test that fails
 * half-way, times out in a hook, or forgets a child leaves nothing running:
 * - per test file, the test environment (scripts/jest-environment.js) kills every process below the Jest process that
 *   ran the file once the file's own hooks are done;
 * - per run, Jest's globalTeardown (scripts/jest-teardown.js) kills every process that carries the run's mark
 *   (INTAKE_TEST_RUN in its environment, set by globalSetup and inherited by every worker and every child they start),
 *   which catches the children of a worker Jest had to kill.
 */
const { readdirSync, readFileSync } = require('node:fs');

/** Every live process as `{ pid, ppid }` (a process that ends while we read is skipped). */
function processes() {
  const out = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command may hold spaces and parentheses: the fields after its last ')' are fixed.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue; // already dead, waiting for its parent
      out.push({ pid: Number(entry), ppid: Number(fields[1]) });
    } catch {
      // gone
    }
  }
  return out;
}

/** The pids below `root` (children, their children…), read at once so a parent killed first cannot orphan them. */
function descendants(root) {
  const children = new Map();
  for (const { pid, ppid } of processes()) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const found = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length > 0) {
    const pid = queue.shift();
    found.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return found;
}

function environOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

function commandOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim().slice(0, 120);
  } catch {
    return '?';
  }
}

/** Live processes whose environment carries `INTAKE_TEST_RUN=<run>`, but for Jest's own workers and `except`. */
function marked(run, except = []) {
  const mark = `INTAKE_TEST_RUN=${run}`;
  return processes()
    .map((p) => p.pid)
    .filter((pid) => !except.includes(pid) && environOf(pid).includes(mark))
    .filter((pid) => !commandOf(pid).includes('jest-worker'));
}

/** Sends SIGKILL to each pid (and the process group it leads, if any); returns what each was, for the report. */
function killAll(pids) {
  const killed = [];
  for (const pid of pids) {
    const command = commandOf(pid);
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // not a group leader, or gone already
      }
    }
    killed.push(`${pid} ${command}`);
  }
  return killed;
}

/** Kills what is below `root`, twice over (a process may have forked while the first pass read /proc). */
function killDescendants(root = process.pid) {
  const killed = killAll(descendants(root));
  return [...killed, ...killAll(descendants(root))];
}

module.exports = { descendants, marked, killAll, killDescendants };
