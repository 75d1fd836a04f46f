export { conversation } from './conversation';
export { modelLimiter } from './model-limiter';
export { agentDailyBudget } from './agent-daily-budget';
