/** `@intake/shared/testing`: what the tests of every workspace share. */
export * from './support';
export * from './processes';
export * from './submissions';
export * from './openapi-contract';
export * from './setup';
export * from './people';
export * from './nats-cluster';
export * from './digest';
export * from './smtp';
