// Opens kport reports in headless Chromium and checks what a reviewer sees.
// usage: node report_browser_test.js CHROMIUM OUT_DIR (REPORT_DIR JOB)...
// Each REPORT_DIR holds index.html and report.json (`kport report --json`):
// the expected counts come from the JSON, the page must show them.
const { chromium } = require('playwright-core');
const fs = require('fs');
const path = require('path');

const [exe, outDir, ...pairs] = process.argv.slice(2);
let failures = 0;
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures++;
}

async function visible(loc) {
  const box = await loc.boundingBox();
  return box !== null && box.width > 0 && box.height > 0;
}

async function checkReport(browser, dir, jobName) {
  const doc = JSON.parse(fs.readFileSync(path.join(dir, 'report.json'), 'utf8'));
  const page = await browser.newPage({ viewport: { width: 1150, height: 900 } });
  const errors = [];
  page.on('pageerror', e => errors.push(String(e)));
  page.on('request', r => { if (!r.url().startsWith('file:')) errors.push('fetched ' + r.url()); });
  await page.goto('file://' + path.resolve(dir, 'index.html'));
  const name = path.basename(dir);

  const rows = page.locator('table#jobs tr.job-row');
  check(await rows.count() === doc.jobs.length, `${name}: a table row per job (${doc.jobs.length})`);
  const withGeomean = doc.jobs.filter(j => j.geomean !== null).length;
  const dots = page.locator('svg.geomean-plot circle.pt');
  check(await dots.count() === withGeomean, `${name}: a geomean point per job with one (${withGeomean})`);
  check(withGeomean === 0 || await visible(page.locator('svg.geomean-plot')), `${name}: the geomean plot is drawn`);

  // Filter by state, then sort by geomean, highest first (two clicks: the
  // first sorts ascending); the rows start in name order.
  await page.selectOption('#state-filter', 'REJECTED');
  const rejected = doc.jobs.filter(j => j.state === 'REJECTED').length;
  check(await page.locator('tr.job-row:visible').count() === rejected,
        `${name}: the REJECTED filter leaves ${rejected} row(s)`);
  await page.selectOption('#state-filter', '');
  await page.click('table#jobs th:has-text("geomean")');
  await page.click('table#jobs th:has-text("geomean")');
  const highest = [...doc.jobs].sort((a, b) => (b.geomean ?? -1) - (a.geomean ?? -1))[0].job;
  const first = await page.locator('tr.job-row').first().getAttribute('data-job');
  check(first === highest, `${name}: sorting by geomean puts ${highest} first (page: ${first})`);

  const job = doc.jobs.find(j => j.job === jobName);
  const section = page.locator(`section.job[id="job-${jobName.replace(/[^A-Za-z0-9]/g, '_')}"]`);
  check(!(await section.isVisible()), `${name}: ${jobName}'s details start closed`);
  await page.click(`tr.job-row[data-job="${jobName}"]`);
  check(await section.isVisible(), `${name}: a click on ${jobName} opens its details`);
  const state = (await section.locator('.verdict .state').textContent()).trim();
  check(state === job.state, `${name}: ${jobName}'s verdict reads ${job.state} (page: ${state})`);
  const reason = (await section.locator('.verdict .reason').textContent()).trim();
  check(reason === job.reason, `${name}: ${jobName}'s reason is the verdict's`);

  const rounds = job.configs.reduce((n, c) => n + c.round_ratios.length, 0);
  const plot = section.locator('svg.ratio-plot');
  check(job.configs.length === 0 || (await plot.count() === 1 && await visible(plot)),
        `${name}: ${jobName}'s ratio plot is drawn`);
  check(await plot.locator('circle.pt-round').count() === rounds,
        `${name}: a point per round (${rounds})`);
  check(await plot.locator('circle.pt-best').count() === job.configs.length,
        `${name}: a point per config (${job.configs.length})`);
  check(await section.locator('div.finding').count() === job.integrity.length,
        `${name}: every finding shown (${job.integrity.length})`);
  check(errors.length === 0, `${name}: no script error, nothing fetched ${errors.join('; ')}`);

  const shot = path.join(outDir, `${name}-${jobName}.png`);
  await page.screenshot({ path: shot, fullPage: true });
  console.log(`screenshot: ${shot}`);
  await page.close();
}

(async () => {
  const browser = await chromium.launch({ executablePath: exe, args: ['--no-sandbox'] });
  try {
    for (let i = 0; i + 1 < pairs.length; i += 2)
      await checkReport(browser, pairs[i], pairs[i + 1]);
  } finally {
    await browser.close();
  }
  if (failures) {
    console.log(`${failures} check(s) failed`);
    process.exit(1);
  }
  console.log('every check passed');
})().catch(e => { console.error(e); process.exit(1); });
