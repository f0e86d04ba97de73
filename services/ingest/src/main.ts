import '@intake/shared/register';
import { runStandalone } from '@intake/shared/runtime';
import { ingestService } from './index';

runStandalone(ingestService).catch((err) => {
  console.error(err);
  process.exit(1);
});
