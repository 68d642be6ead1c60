#!/usr/bin/env node
// The service is written in TypeScript and run through tsx's loader, so `npm install` is the only
// build step a user ever needs.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
await main(process.argv.slice(2));
