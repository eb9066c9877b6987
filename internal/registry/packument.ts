/**
 * The registry documents: what a plinth registry (or any npm-compatible one)
 * serves, as the marketplace client reads them and as `registry/` writes them
 * (the marketplace plugin's README, "Protocol"). Schemas are lenient where real npm
 * registries differ (unknown fields pass through, optional fields may be
 * absent) and strict on what install relies on: a version's `dist.tarball`
 * and, when given, its `dist.integrity` SRI string (the abbreviated form a
 * client reads may lack it: {@link clientDistSchema}).
 *
 * The search scoring lives here too, so that a registry's server and the
 * client merging results of several registries rank the same way.
 */
import semver from 'semver';
import { z } from 'zod';
import { pluginName } from '../../sdk/manifest.js';

/** The media type an npm client asks for to get the abbreviated packument. */
export const ABBREVIATED_PACKUMENT_TYPE = 'application/vnd.npm.install-v1+json';

/** One SRI token: `<algorithm>-<base64 digest>` with optional `?options`. */
const SRI_TOKEN = /^(sha1|sha256|sha384|sha512|md5)-[A-Za-z0-9+/]+={0,2}(\?[\x21-\x7e]*)?$/;

/**
 * An SRI string (`sha512-… sha256-…`): whitespace-separated tokens, each a
 * known algorithm and a base64 digest. Weak algorithms (sha1, md5) pass the
 * schema so that the client can refuse them with its own, clearer error.
 */
export const integritySchema = z
  .string({ error: 'expected an SRI integrity string such as "sha512-…"' })
  .refine((value) => {
    const tokens = value.trim().split(/\s+/);
    return tokens.length > 0 && tokens.every((token) => SRI_TOKEN.test(token));
  }, 'expected an SRI integrity string such as "sha512-<base64>" (one or more tokens separated by spaces)');

/**
 * Where a version's tarball is: an absolute `http:`/`https:` URL, or a path
 * relative to the registry's root (`-/name-1.0.0.tgz`), as a static registry
 * folder stores it; resolve it with {@link resolveTarballUrl}. A relative path
 * never climbs (`..`), never starts with `/` and has no backslash.
 */
export const tarballUrlSchema = z.string({ error: 'expected the tarball URL' }).refine(isTarballReference, 'expected an http(s) URL, or a path relative to the registry root without "..", "\\" or a leading "/"');

function isTarballReference(value: string): boolean {
  if (/^[a-z][a-z0-9+.-]*:/i.test(value)) {
    try {
      const url = new URL(value);
      return url.protocol === 'https:' || url.protocol === 'http:';
    } catch {
      return false;
    }
  }
  if (value === '' || value.startsWith('/') || value.includes('\\') || /[\u0000-\u001f\u007f]/.test(value)) return false;
  return !value.split('/').some((segment) => segment === '..' || segment === '.');
}

/** `dist.signatures[]`: npm's registry signature over `<name>@<version>:<integrity>`. */
export const distSignatureSchema = z.looseObject({ keyid: z.string(), sig: z.string() });

/** A version's `dist`: where its tarball is and how to check it. */
export const distSchema = z.looseObject({
  tarball: tarballUrlSchema,
  integrity: integritySchema,
  /** The sha1 hex npm has always listed: for compatibility only, never used to verify. */
  shasum: z.string().optional(),
  fileCount: z.number().int().nonnegative().optional(),
  unpackedSize: z.number().int().nonnegative().optional(),
  signatures: z.array(distSignatureSchema).optional(),
});

const semverVersion = z.string().refine((v) => semver.valid(v) !== null, 'expected a semver version such as "1.2.3"');
const stringMap = z.record(z.string(), z.string());

/**
 * One version in a full packument: the manifest fields the resolver needs
 * (`kernel`, `dependencies`) and those search shows (`description`,
 * `keywords`), plus `dist`. `kernel` is absent for an npm package that is not
 * a plinth plugin; the client says so rather than this schema.
 */
export const packumentVersionSchema = z.looseObject({
  name: pluginName,
  version: semverVersion,
  description: z.string().optional(),
  keywords: z.array(z.string()).optional(),
  kernel: z.string().optional(),
  dependencies: stringMap.optional(),
  engines: stringMap.optional(),
  deprecated: z.string().optional(),
  dist: distSchema,
});

/** A version listed under another version's key would install something else than what was resolved. */
function keysAreVersions(versions: Record<string, { version: string }>, ctx: z.RefinementCtx): void {
  for (const [key, doc] of Object.entries(versions)) {
    if (doc.version !== key) ctx.addIssue({ code: 'custom', path: [key, 'version'], message: `expected "${key}", the version it is listed under` });
  }
}

/** The document `GET /<name>` returns (npm's "packument"). */
export const packumentSchema = z.looseObject({
  name: pluginName,
  description: z.string().optional(),
  'dist-tags': stringMap.default({}),
  versions: z.record(z.string(), packumentVersionSchema).superRefine(keysAreVersions),
  /** `created`, `modified` and one ISO time per version. */
  time: stringMap.optional(),
  keywords: z.array(z.string()).optional(),
  readme: z.string().optional(),
});

/**
 * A version's `dist` as a client reads it from any registry: `integrity` may be absent (old npm
 * packuments list only the sha1 `shasum`); the client refuses such a version as weak
 * (`PLN_E_INTEGRITY_WEAK`), saying why, rather than the document as malformed.
 */
export const clientDistSchema = distSchema.extend({ integrity: integritySchema.optional() });

/** One version of an abbreviated packument: what install needs, nothing more. */
export const abbreviatedVersionSchema = z.looseObject({
  name: pluginName,
  version: semverVersion,
  /** A plinth registry keeps `kernel` in the abbreviated form; npm's does not (fetch the full packument then). */
  kernel: z.string().optional(),
  dependencies: stringMap.optional(),
  engines: stringMap.optional(),
  deprecated: z.string().optional(),
  dist: clientDistSchema,
});

/** The document `GET /<name>` returns with `Accept: application/vnd.npm.install-v1+json`. */
export const abbreviatedPackumentSchema = z.looseObject({
  name: pluginName,
  modified: z.string().optional(),
  'dist-tags': stringMap.default({}),
  versions: z.record(z.string(), abbreviatedVersionSchema).superRefine(keysAreVersions),
});

/** One result's package: lenient, since search results only inform (install reads the packument). */
export const searchPackageSchema = z.looseObject({
  name: z.string().min(1),
  /** npm's registry and plinth's give it; Verdaccio gives only `dist-tags` (see {@link searchPackageVersion}). */
  version: z.string().optional(),
  'dist-tags': z.record(z.string(), z.string()).optional(),
  description: z.string().optional(),
  keywords: z.array(z.string()).optional(),
  date: z.string().optional(),
  links: z.record(z.string(), z.string()).optional(),
});

/** The version a search result shows: its `version`, else its `dist-tags.latest` (Verdaccio), else none. */
export function searchPackageVersion(pkg: z.infer<typeof searchPackageSchema>): string | undefined {
  return pkg.version ?? pkg['dist-tags']?.latest;
}

/** One result of `GET /-/v1/search`. */
export const searchObjectSchema = z.looseObject({
  package: searchPackageSchema,
  score: z
    .looseObject({
      final: z.number(),
      detail: z.looseObject({ quality: z.number().optional(), popularity: z.number().optional(), maintenance: z.number().optional() }).optional(),
    })
    .optional(),
  searchScore: z.number().optional(),
});

/** The document `GET /-/v1/search?text=&size=&from=` returns. */
export const searchResponseSchema = z.looseObject({
  objects: z.array(searchObjectSchema),
  total: z.number().int().nonnegative().optional(),
  time: z.string().optional(),
});

export type Dist = z.infer<typeof distSchema>;
export type DistSignature = z.infer<typeof distSignatureSchema>;
export type PackumentVersion = z.infer<typeof packumentVersionSchema>;
export type Packument = z.infer<typeof packumentSchema>;
export type AbbreviatedVersion = z.infer<typeof abbreviatedVersionSchema>;
export type AbbreviatedPackument = z.infer<typeof abbreviatedPackumentSchema>;
export type SearchPackage = z.infer<typeof searchPackageSchema>;
export type SearchObject = z.infer<typeof searchObjectSchema>;
export type SearchResponse = z.infer<typeof searchResponseSchema>;

/**
 * The URL of `name`'s packument on the registry at `registryUrl`: a scoped
 * name's slash is encoded (`@scope%2fname`), as npm clients send it.
 */
export function packumentUrl(registryUrl: string, name: string): URL {
  return new URL(encodePackageName(name), registryRoot(registryUrl));
}

/** `@scope/name` → `@scope%2fname`; an unscoped name unchanged (npm names need no other escaping). */
export function encodePackageName(name: string): string {
  return name.startsWith('@') ? name.replace('/', '%2f') : name;
}

/**
 * The absolute URL of a tarball: `tarball` as it is when absolute, else
 * resolved against the registry's root (not against the packument's URL,
 * whose path differs for scoped names).
 */
export function resolveTarballUrl(registryUrl: string, tarball: string): URL {
  return new URL(tarball, registryRoot(registryUrl));
}

/** The registry's root with a trailing slash, so that relative paths resolve under it (`https://host/npm` → `https://host/npm/`). */
export function registryRoot(registryUrl: string): URL {
  const url = new URL(registryUrl);
  url.search = '';
  url.hash = '';
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

/**
 * Where a static registry folder keeps its documents, as paths relative to its
 * root (`/`-separated), chosen so that a plain static web server answers the
 * same URLs as `plinth registry serve`: a packument is the file `<name>`
 * (`@scope/name`: the file `name` in the folder `@scope`, which a static
 * server finds for `/@scope%2fname` once it decodes the `%2f`), a tarball is
 * `-/<name>-<version>.tgz`, and the search index is the file `-/v1/search`
 * (a static server ignores the query, so it returns the whole index; the
 * client scores it with {@link searchScore} and gets the same ranking).
 */
export const REGISTRY_SEARCH_INDEX = '-/v1/search';

/** The packument's path in a static registry folder: `name`, or `@scope/name`. */
export function packumentFile(name: string): string {
  return name;
}

/** A tarball's path in a static registry folder (also the relative `dist.tarball` written there): `-/name-1.0.0.tgz`, `-/@scope/name-1.0.0.tgz`. */
export function tarballFile(name: string, version: string): string {
  return `-/${name}-${version}.tgz`;
}

/** The version `dist-tags.latest` should name: the highest version that is not a prerelease (the highest prerelease when all are). */
export function latestVersion(versions: Iterable<string>): string | undefined {
  const valid = [...versions].filter((v) => semver.valid(v) !== null).sort(semver.rcompare);
  return valid.find((v) => semver.prerelease(v) === null) ?? valid[0];
}

// The search scoring is part of this contract; it has a file of its own.
export * from './search.js';
