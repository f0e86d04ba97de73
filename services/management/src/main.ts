import '@intake/shared/register';
import { runStandalone } from '@intake/shared/runtime';
import { managementService } from './index';

runStandalone(managementService).catch((err) => {
  console.error(err);
  process.exit(1);
});
