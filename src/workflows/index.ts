export { conversation } from './conversation';
