/** The http layer of @intake/shared, imported as '@intake/shared/http' (see .dependency-cruiser.cjs for what it may import). */
export * from './app';
export * from './client-address';
export * from './file-links';
export * from './html';
export * from './openapi';
export * from './problems';
export * from './route';
export * from './server';
export type { Router as KoaRouter } from '@koa/router';
