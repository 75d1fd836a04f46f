// nock intercepts through Node's own http and https modules, which every test file in one jest
// worker shares: left active after a file that fakes the model, it stays for later files and their
// real HTTPS connections (a pinned TLS link lost its port to it). Each file ends with it undone;
// loaded only then, so a file that never fakes HTTP never runs with it.
afterAll(async () => {
  const { default: nock } = await import('nock');
  nock.cleanAll();
  nock.restore();
});
