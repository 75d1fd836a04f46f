export { conversation } from './conversation';
export { modelLimiter } from './model-limiter';
