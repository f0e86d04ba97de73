/** The messaging layer of @intake/shared, imported as '@intake/shared/messaging' (see .dependency-cruiser.cjs for what it may import). */
export * from './consumer';
export * from './form-changes';
export * from './nats';
export * from './streams';
export * from './trace-headers';
export * from './stream-publisher';
export * from './outbox';
