/**
 * Search scoring: one function, used by the registry server (`plinth registry
 * serve`) and by the marketplace client, which scores a static registry's
 * whole index and merges the answers of several registries by it.
 */

/** The fields search looks at. */
export interface SearchFields {
  readonly name: string;
  readonly keywords?: readonly string[];
  readonly description?: string;
}

/**
 * {@link SearchFields} lowercased and laid out once, so that scoring 10,000
 * documents per query costs a few `includes` each.
 */
export interface PreparedSearchDoc {
  readonly name: string;
  /** The name without its `@scope/`. */
  readonly bare: string;
  readonly description: string;
  /** Every field in one string: a term found nowhere in it rules the document out at once. */
  readonly all: string;
  /** The name's words (split at `@`, `/`, `.`, `_`, `-`), each between spaces: ` acme git tools `. */
  readonly nameWords: string;
  /** The keywords, each between newlines. */
  readonly keywordLines: string;
  /** The description's words (letters and digits), each between spaces. */
  readonly descriptionWords: string;
}

/** A query lowercased and split once. */
export interface PreparedQuery {
  readonly text: string;
  readonly terms: readonly string[];
}

/** Scores at or above these mark the tiers: exact name, then name prefix, then full text. */
export const SEARCH_TIER = { exact: 3, prefix: 2, text: 1 } as const;

/** Prepares a document for {@link searchScore}: once per document, not per query. */
export function prepareSearchDoc(fields: SearchFields): PreparedSearchDoc {
  const name = fields.name.toLowerCase();
  const keywords = (fields.keywords ?? []).map((k) => k.toLowerCase());
  const description = (fields.description ?? '').toLowerCase();
  const slash = name.startsWith('@') ? name.indexOf('/') : -1;
  const spaced = (words: string[]) => ` ${words.filter((w) => w !== '').join(' ')} `;
  return {
    name,
    bare: slash === -1 ? name : name.slice(slash + 1),
    description,
    all: `${name}\n${keywords.join('\n')}\n${description}`,
    nameWords: spaced(name.split(NAME_SEPARATORS)),
    keywordLines: `\n${keywords.join('\n')}\n`,
    descriptionWords: spaced(description.split(/[^a-z0-9]+/)),
  };
}

const NAME_SEPARATORS = /[@/._-]+/;

/** Prepares a query for {@link searchScore}: lowercased, split into terms at white space. */
export function prepareQuery(text: string): PreparedQuery {
  const normal = text.trim().toLowerCase();
  return { text: normal, terms: normal.split(/\s+/).filter((t) => t !== '') };
}

/**
 * How well `doc` matches `query`; 0 when it does not match. Tiers first:
 * 3 + … for an exact name (with or without its scope), 2 + … for a name
 * starting with the query, 1 + … when every term of the query is found in
 * the name, a keyword or the description; within a tier, a fraction in
 * [0, 1) for how strongly the terms match (name over keywords over
 * description, whole words over parts of words), so that comparing two scores
 * orders by tier, then by strength. An empty query matches everything at 1.
 *
 * Independent of the registry that returned `doc`, so that the client can
 * merge several registries' results by this score alone.
 */
export function searchScore(query: PreparedQuery, doc: PreparedSearchDoc): number {
  if (query.terms.length === 0) return SEARCH_TIER.text;
  const strength = termStrength(query, doc);
  // The whole name before the name without its scope, within each tier.
  if (query.text === doc.name) return SEARCH_TIER.exact + strength;
  if (query.text === doc.bare) return SEARCH_TIER.exact + strength * 0.9;
  if (doc.name.startsWith(query.text)) return SEARCH_TIER.prefix + strength;
  if (doc.bare.startsWith(query.text)) return SEARCH_TIER.prefix + strength * 0.9;
  return strength === 0 ? 0 : SEARCH_TIER.text + strength;
}

/**
 * Per term, its best match: 3 for a word of the name (`git` in `git-tools`),
 * 2.5 for the start of one, 2 for a keyword (1.5 its start), 1 for the start
 * of a word of the description, 0.5 for a match inside a word (of the name or
 * the description: `git` in `digital`). 0 when a term matches nowhere (every
 * term must match). The average, mapped into [0, 1).
 */
function termStrength(query: PreparedQuery, doc: PreparedSearchDoc): number {
  let total = 0;
  for (const term of query.terms) {
    if (!doc.all.includes(term)) return 0;
    let best = nameMatch(doc, term);
    if (best < 2) {
      if (doc.keywordLines.includes(`\n${term}\n`)) best = 2;
      else if (best < 1.5 && doc.keywordLines.includes(`\n${term}`)) best = 1.5;
    }
    if (best < 1) best = Math.max(best, startsWord(doc.descriptionWords, doc.description, term, /[a-z0-9]/));
    if (best === 0) return 0;
    total += best;
  }
  // Average strength (at most 3) into [0, 1), leaving room below the next tier.
  return (total / query.terms.length / 3) * 0.999;
}

function nameMatch(doc: PreparedSearchDoc, term: string): number {
  if (doc.nameWords.includes(` ${term} `)) return 3;
  const inName = startsWord(doc.nameWords, doc.name, term, /[^@/._-]/);
  return inName === 1 ? 2.5 : inName;
}

/**
 * 1 when `term` starts a word of `text` (`words`: its words between spaces;
 * `inWord`: a character that continues a word), 0.5 when it is only inside
 * one, 0 when it is not in `text`.
 */
function startsWord(words: string, text: string, term: string, inWord: RegExp): number {
  if (words.includes(` ${term}`)) return 1;
  let at = text.indexOf(term);
  if (at === -1) return 0;
  // A term with separators in it (`plugin-42`) is not one word: look at what precedes it in the text.
  for (; at !== -1; at = text.indexOf(term, at + 1)) if (at === 0 || !inWord.test(text[at - 1]!)) return 1;
  return 0.5;
}

/** Orders scored results: higher score first, then by name, so that equal scores list the same way everywhere. */
export function compareSearchResults(a: { score: number; name: string }, b: { score: number; name: string }): number {
  return b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/**
 * Ranks search results by {@link searchScore} against `text`: those that do
 * not match left out, best first, ties by name. What a client does with one
 * registry's answer (a static registry returns its whole index) or with the
 * answers of several, merged.
 */
export function rankSearchObjects<T extends { readonly package: SearchFields }>(text: string, objects: readonly T[]): Array<{ object: T; score: number }> {
  const query = prepareQuery(text);
  return objects
    .map((object) => ({ object, score: searchScore(query, prepareSearchDoc(object.package)), name: object.package.name.toLowerCase() }))
    .filter((hit) => hit.score > 0)
    .sort(compareSearchResults)
    .map(({ object, score }) => ({ object, score }));
}
