/**
 * One stage of the pipeline on a thread of its own (`bench/stages.js`): the outbox relay, one of
 * delivery's consumers (fan-out, send, mail) or usage's. The thread writes its Linux thread id
 * to `$BENCH_STAGE_TIDS/<stage>`, so that the bench reads its CPU time from /proc.
 */
require('@intake/shared/register');
const fs = require('node:fs');
const path = require('node:path');
const { workerData } = require('node:worker_threads');
const { runBackgroundThread, startPlatformRelay } = require('@intake/shared/runtime');
const { startDeliveryWorkers } = require('@intake/delivery');
const { usageService } = require('@intake/usage');

const stage = workerData.service.replace(/^stage-/, '');
const starts = {
  relay: async (platform) => [startPlatformRelay(platform)],
  'fan-out': (platform) => startDeliveryWorkers(platform, ['fanOut']),
  send: (platform) => startDeliveryWorkers(platform, ['send']),
  mail: (platform) => startDeliveryWorkers(platform, ['mail']),
  usage: (platform) => usageService.startWorkers(platform),
};
if (!starts[stage]) throw new Error(`no stage named ${stage}`);
// /proc/thread-self is this thread's /proc/<pid>/task/<tid>.
fs.writeFileSync(path.join(process.env.BENCH_STAGE_TIDS, stage), path.basename(fs.readlinkSync('/proc/thread-self')));
runBackgroundThread(starts[stage]);
