/** The runtime layer of @intake/shared, imported as '@intake/shared/runtime' (see .dependency-cruiser.cjs for what it may import). */
export * from './background-thread';
export * from './backlogs';
export * from './database-gauges';
export * from './health';
export * from './periodic';
export * from './platform';
export * from './service';
