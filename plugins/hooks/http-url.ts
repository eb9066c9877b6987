/** The `url` of an `http` hook, as its definitions (plinth's and Claude Code's) take it. No imports but zod: definition.ts reads it while its module loads. */
import { z } from 'zod';

/** An http:// or https:// URL without credentials in it. */
export const httpUrl = z
  .string({ error: 'expected "url": the address to POST to, e.g. "http://localhost:8080/hooks"' })
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
    } catch {
      return false;
    }
  }, 'expected an http:// or https:// URL without a user name or password (put credentials in "headers", filled from "allowedEnvVars")');
