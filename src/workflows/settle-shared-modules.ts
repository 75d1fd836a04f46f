/**
 * The bundle's last preloaded module: by the time it runs, every module of the graph is loaded and
 * about to be frozen and shared (src/workflows/shared-module-graph.ts says why this is needed).
 */
import { settleExportedSchemas } from './shared-module-graph';

settleExportedSchemas();
