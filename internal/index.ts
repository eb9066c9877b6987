/**
 * plinth/internal: what plinth's own builtin plugins share and third parties
 * must not rely on. It is not in package.json's `exports`: the kernel's loader
 * gives it to builtin plugins only (a virtual module, as `plinth/sdk` is for
 * every plugin), and the build resolves it for the bundled ones. Anything here
 * may change in any release; what a third party needs belongs in `plinth/sdk`.
 *
 * Organised by concern, one folder each (see internal/README.md).
 */

// contracts: services only builtin plugins provide and consume.
export { GRANT_OPTION, grantReviewLines } from './contracts/grants.js';
export type { GrantReview, GrantsService } from './contracts/grants.js';

// Details of public contracts that the sdk's files hold but do not publish.
export { lockFileSchema, registrySettingSchema } from '../sdk/contracts/marketplace.js';
export { MCP_SERVER_NAME, MCP_TRANSPORT_NAME, mcpEntryTransport, mcpProtocolSchema } from '../sdk/contracts/mcp-server.js';
export { ENV_SOURCE, envSourceOf, hostPattern } from '../sdk/contracts/sandbox.js';
export { describeCause, describeFileError } from '../sdk/errors.js';
export { pluginName } from '../sdk/manifest.js';

// peer: Claude Code and Gemini CLI folders and hook events, read as plinth's.
export { PEER_MANIFEST_FILES, readPeerFolder } from './peer/manifest.js';
export { CODEX_HOOK_EVENTS, isPeerEventOf, isPeerHookEvent, PEER_HOOK_TYPES, peerEventsOf, peerHookGaps, tagPeerHooks } from './peer/hooks.js';
export type { PeerProtocol } from './peer/hooks.js';

// permissions: matching declared permissions, package runners, workspace paths.
export { capabilityDenied, capabilityTarget, hostRefusal, isIpLiteral, normalizeHost, parseHostPattern, permits } from './permissions/match.js';
export { packageRunnerOf, withPackageRunner } from './permissions/package-runner.js';
export { entryFolder, expandWorkspace, isInside, pathOutside, workspaceWords } from './permissions/workspace-content.js';

// process: process groups and trees (the launcher's bookkeeping).
export {
  TREE_MARK,
  descendantsOf,
  groupMembers,
  isAlive,
  killGroup,
  markedProcesses,
  markedProcessesShared,
  pipeHolders,
  pipeNames,
  signalEach,
  trackGroup,
  trackMark,
  treeMarkValue,
  untrackGroup,
  untrackMark,
} from './process/tree.js';

// registry: npm-compatible documents, search ranking, signatures, signed indexes, installed trees.
export {
  ABBREVIATED_PACKUMENT_TYPE,
  abbreviatedPackumentSchema,
  compareSearchResults,
  packumentUrl,
  prepareQuery,
  prepareSearchDoc,
  registryRoot,
  resolveTarballUrl,
  searchPackageVersion,
  searchResponseSchema,
  searchScore,
} from './registry/packument.js';
export type { AbbreviatedPackument, AbbreviatedVersion, SearchResponse } from './registry/packument.js';
export { REGISTRY_KEYS_PATH, checkVersionSignatures, publicKeyOf, registryKeysSchema } from './registry/signatures.js';
export type { RegistryKeys } from './registry/signatures.js';
export {
  REGISTRY_INDEX_PATH,
  REGISTRY_REVOCATIONS_PATH,
  REGISTRY_ROTATIONS_PATH,
  documentSigner,
  packumentDigest,
  registryIndexSchema,
  revocationsDigest,
  revocationsSchema,
  rotationsSchema,
} from './registry/trust.js';
export type { IndexSigned, RevocationsSigned, RevokedVersion, Rotations } from './registry/trust.js';
export { defaultRegistryFolder, plinthPackageFolder } from './registry/default.js';
export {
  INSTALLED_LOCK_FILE,
  INSTALLED_VERSIONS_DIR,
  checkTree,
  describeTreeCheck,
  hashFileHandle,
  hashTree,
  installedVersionFolder,
  realInstalledFolder,
  treeDigest,
} from './registry/installed-tree.js';
export type { InstalledTree, TreeFile } from './registry/installed-tree.js';

// settings: editing settings files, secrets kept in the secret store.
export { editSettingsFile, readSettingsFile, settingsFileError } from './settings/file.js';
export type { SettingsData, SettingsEdit, SettingsFileOwner, SettingsFileRef } from './settings/file.js';
export { isStoredSettingRef, storedSettingKey, storedSettingRef } from './settings/stored.js';

// terminal: questions asked on a terminal.
export { askChoice, askText, askYesNo, processTerminal, whyNotAsk } from './terminal/prompt.js';
export type { PromptIO } from './terminal/prompt.js';

// text: JSON with positions, names, globs, redaction.
export { parseJsonText } from './text/json.js';
export { closestName } from './text/suggest.js';
export { globTest } from '../sdk/globs.js';
export type { GlobOptions, GlobTest } from '../sdk/globs.js';
export { REDACTED, Redactor, SECRET_NAME } from './text/redact.js';

// mcp-registry: the MCP Registry's server.json and API v0.1 documents (registry serve, the mcp plugin's client).
export {
  MCP_REGISTRY_API,
  MCP_REGISTRY_OFFICIAL_META,
  issuePath,
  mcpServerJsonSchema,
  mcpServerListSchema,
  mcpServerResponseSchema,
  mcpServerStatusSchema,
  statusOf,
} from './mcp-registry/server-json.js';
export type { McpArgument, McpKeyValueInput, McpPackage, McpRemote, McpServerJson, McpServerList, McpServerResponse, McpServerStatus } from './mcp-registry/server-json.js';
