// The ten mock layouts of bench/vision.md, each a function of how it is written: `font` (a CSS
// font stack), `words` (0: the mock's text, 1: other text of the same shape), `dx` (a few px
// of padding added: a small shift) and `alt` (the layout's other colour scheme or arrangement:
// a plausible wrong answer). tests/bench/vision-fixtures.mjs writes the fixtures from them.

const W = (o, a, b) => (o.words ? b : a);
const page = (o, css, body) => `<!doctype html><html><head><meta charset="utf-8"><title>mock</title><style>
*{box-sizing:border-box}body{margin:0;font-family:${o.font};color:#1f2933;background:#fff}
${css}</style></head><body>${body}</body></html>\n`;
const repeat = (n, f) => Array.from({ length: n }, (_, i) => f(i)).join('');

export const LAYOUTS = {
  landing: (o) => page(o, `
nav{height:64px;background:${o.alt ? '#f4f6f8' : '#111827'};color:${o.alt ? '#111' : '#fff'};display:flex;align-items:center;padding:0 ${32 + o.dx}px;gap:24px}
.hero{padding:${64 + o.dx}px 48px;text-align:center}.hero h1{font-size:40px;margin:0 0 16px}
.cta{display:inline-block;background:#2563eb;color:#fff;padding:14px 28px;border-radius:8px}
.cards{display:flex;gap:24px;padding:0 48px 48px}.card{flex:1;background:#f3f4f6;border-radius:12px;padding:24px;height:160px}`,
  `<nav><b>${W(o, 'Acme', 'Northwind')}</b><span>${W(o, 'Product', 'Features')}</span><span>${W(o, 'Pricing', 'Plans')}</span></nav>
<div class="hero"><h1>${W(o, 'Ship faster with Acme', 'Build better with Northwind')}</h1><p>${W(o, 'The platform for teams who build.', 'Everything your team needs, in one place.')}</p><span class="cta">${W(o, 'Get started', 'Try it free')}</span></div>
<div class="cards">${repeat(3, (i) => `<div class="card"><h3>${W(o, 'Feature', 'Benefit')} ${i + 1}</h3><p>${W(o, 'Short text about it.', 'A line on why it matters.')}</p></div>`)}</div>`),

  dashboard: (o) => page(o, `
body{display:flex;min-height:640px}aside{width:200px;flex:none;background:${o.alt ? '#fff' : '#1e293b'};color:${o.alt ? '#333' : '#cbd5e1'};padding:24px ${16 + o.dx}px;${o.alt ? 'order:2;border-left:1px solid #ddd' : ''}}
aside p{margin:0 0 18px}main{flex:1;background:#f1f5f9;padding:${24 + o.dx}px}
.stats{display:grid;grid-template-columns:repeat(4,minmax(0,1fr));gap:16px}.stat{background:#fff;border-radius:8px;padding:16px;height:96px}
.stat b{font-size:26px;display:block}table{width:100%;margin-top:24px;background:#fff;border-collapse:collapse}td{padding:10px;border-bottom:1px solid #e2e8f0}`,
  `<aside>${repeat(6, (i) => `<p>${W(o, ['Home', 'Orders', 'Customers', 'Reports', 'Team', 'Settings'], ['Overview', 'Sales', 'Clients', 'Stats', 'People', 'Options'])[i]}</p>`)}</aside>
<main><div class="stats">${repeat(4, (i) => `<div class="stat">${W(o, 'Revenue', 'Income')}<b>${W(o, '$12,400', '9,310')}${i}</b></div>`)}</div>
<table>${repeat(8, (i) => `<tr><td>${W(o, 'Order', 'Invoice')} #${1040 + i}</td><td>${W(o, 'Paid', 'Settled')}</td><td>${W(o, '$120.00', '€99')}</td></tr>`)}</table></main>`),

  article: (o) => page(o, `
body{background:${o.alt ? '#0f172a' : '#fafaf9'};color:${o.alt ? '#e2e8f0' : '#292524'}}article{max-width:${o.alt ? 760 : 560}px;margin:0 auto;padding:${48 + o.dx}px 24px}
h1{font-size:34px;line-height:1.2}.figure{height:200px;background:#d6d3d1;margin:24px 0;border-radius:6px}p{line-height:1.7}`,
  `<article><h1>${W(o, 'Notes on building small tools', 'What I learned writing little programs')}</h1><p>${W(o, 'By Ada, March 3', 'Posted by Lin on May 9')}</p>
<div class="figure"></div>${repeat(3, () => `<p>${W(o, 'Small tools are easy to start and hard to finish. This paragraph talks about the parts that take longest and why they matter to the people who use them.', 'Little programs begin quickly and end slowly. Here is a paragraph on the slow parts, the ones that decide whether anyone keeps using what you made.')}</p>`)}</article>`),

  pricing: (o) => page(o, `
h2{text-align:center;margin:${40 + o.dx}px 0}.plans{display:flex;gap:20px;padding:0 40px 48px}
.plan{flex:1;border:1px solid #e5e7eb;border-radius:12px;padding:28px;height:380px;background:#fff}
.plan.mid{background:${o.alt ? '#fff' : '#4f46e5'};color:${o.alt ? 'inherit' : '#fff'};${o.alt ? '' : 'transform:scale(1.04)'}}
.price{font-size:36px;font-weight:700}.btn{margin-top:24px;padding:12px;text-align:center;border-radius:8px;background:#111827;color:#fff}
body{background:${o.alt ? '#fef3c7' : '#f9fafb'}}`,
  `<h2>${W(o, 'Simple pricing', 'Plans for every team')}</h2><div class="plans">${repeat(3, (i) => `<div class="plan${i === 1 ? ' mid' : ''}"><h3>${W(o, ['Starter', 'Pro', 'Business'], ['Basic', 'Team', 'Enterprise'])[i]}</h3><div class="price">$${[9, 29, 99][i]}</div><p>${W(o, 'Everything to get going.', 'What most teams need.')}</p><p>${W(o, 'Email support', 'Chat support')}</p><div class="btn">${W(o, 'Choose', 'Select')}</div></div>`)}</div>`),

  login: (o) => page(o, `
body{min-height:600px;display:grid;place-items:center;background:${o.alt ? '#fff' : 'linear-gradient(135deg,#0ea5e9,#6366f1)'}}
.box{width:360px;background:#fff;border-radius:14px;padding:${32 + o.dx}px;box-shadow:0 10px 30px #0003}
label{display:block;margin:14px 0 6px;font-size:14px}.input{height:40px;border:1px solid #cbd5e1;border-radius:6px}
.btn{margin-top:22px;height:44px;border-radius:6px;background:#0f172a;color:#fff;display:grid;place-items:center}`,
  `<div class="box"><h2>${W(o, 'Sign in', 'Welcome back')}</h2><label>${W(o, 'Email', 'Your email')}</label><div class="input"></div><label>${W(o, 'Password', 'Your password')}</label><div class="input"></div><div class="btn">${W(o, 'Sign in', 'Log in')}</div></div>`),

  gallery: (o) => page(o, `
header{padding:${24 + o.dx}px 32px;font-size:24px;font-weight:700}.grid{display:grid;grid-template-columns:repeat(${o.alt ? 2 : 3},1fr);gap:12px;padding:0 32px 32px}
.tile{height:${o.alt ? 120 : 170}px;border-radius:4px}`,
  `<header>${W(o, 'Photos', 'Gallery')}</header><div class="grid">${repeat(o.alt ? 8 : 9, (i) => `<div class="tile" style="background:${['#f97316', '#84cc16', '#06b6d4', '#a855f7', '#ef4444', '#eab308', '#14b8a6', '#3b82f6', '#ec4899'][i]}"></div>`)}</div>`),

  chat: (o) => page(o, `
body{display:flex;height:620px}.list{width:260px;border-right:1px solid #e5e7eb;background:${o.alt ? '#4c1d95' : '#f8fafc'};color:${o.alt ? '#fff' : 'inherit'}}
.item{padding:${14 + o.dx / 2}px 16px;border-bottom:1px solid #e5e7eb}.main{flex:1;display:flex;flex-direction:column}
.msgs{flex:1;padding:20px;display:flex;flex-direction:column;gap:12px}.m{max-width:60%;padding:10px 14px;border-radius:14px;background:#e5e7eb}
.m.me{align-self:flex-end;background:#22c55e;color:#fff}.input{height:56px;border-top:1px solid #e5e7eb;margin:0}`,
  `<div class="list">${repeat(8, (i) => `<div class="item"><b>${W(o, 'Sam', 'Alex')} ${i}</b><br>${W(o, 'See you then', 'Sounds good')}</div>`)}</div>
<div class="main"><div class="msgs">${repeat(6, (i) => `<div class="m${i % 2 ? ' me' : ''}">${W(o, 'Are we still on for Friday?', 'Is the meeting at noon?')}</div>`)}</div><div class="input"></div></div>`),

  kanban: (o) => page(o, `
body{background:${o.alt ? '#fff' : '#e2e8f0'}}h2{margin:0;padding:${20 + o.dx}px 24px;background:#0f766e;color:#fff}
.board{display:flex;gap:16px;padding:20px;${o.alt ? 'flex-direction:column' : ''}}.col{flex:1;background:#f8fafc;border-radius:8px;padding:12px}
.card{background:#fff;border-radius:6px;padding:12px;margin-bottom:10px;box-shadow:0 1px 2px #0002;height:64px}`,
  `<h2>${W(o, 'Sprint board', 'Team tasks')}</h2><div class="board">${repeat(3, (c) => `<div class="col"><b>${W(o, ['To do', 'Doing', 'Done'], ['Backlog', 'In progress', 'Shipped'])[c]}</b>${repeat(4 - c, (i) => `<div class="card">${W(o, 'Write the tests', 'Fix the login')} ${i}</div>`)}</div>`)}</div>`),

  settings: (o) => page(o, `
header{height:56px;background:${o.alt ? '#b91c1c' : '#16a34a'};color:#fff;padding:16px ${24 + o.dx}px}
form{max-width:${o.alt ? 720 : 520}px;padding:24px}.row{display:flex;align-items:center;gap:16px;margin-bottom:18px}
.row span{width:140px}.field{flex:1;height:36px;border:1px solid #d1d5db;border-radius:6px}.save{width:120px;height:40px;background:#16a34a;border-radius:6px}`,
  `<header>${W(o, 'Settings', 'Preferences')}</header><form>${repeat(7, (i) => `<div class="row"><span>${W(o, ['Name', 'Email', 'Phone', 'City', 'Country', 'Language', 'Time zone'], ['Full name', 'Mail', 'Mobile', 'Town', 'Region', 'Locale', 'Zone'])[i]}</span><div class="field"></div></div>`)}<div class="save"></div></form>`),

  product: (o) => page(o, `
nav{height:48px;border-bottom:1px solid #e5e7eb;padding:14px 32px}.wrap{display:flex;gap:40px;padding:${32 + o.dx}px;${o.alt ? 'flex-direction:row-reverse' : ''}}
.photo{width:360px;height:360px;background:${o.alt ? '#1f2937' : '#fde68a'};border-radius:12px}.info{flex:1}
.price{font-size:30px;color:#b45309;margin:12px 0}.buy{width:200px;height:48px;background:#f59e0b;border-radius:24px;margin-top:24px}`,
  `<nav>${W(o, 'Shop', 'Store')}</nav><div class="wrap"><div class="photo"></div><div class="info"><h1>${W(o, 'Ceramic mug', 'Stoneware cup')}</h1><div class="price">${W(o, '$24', '$19.50')}</div><p>${W(o, 'Handmade, holds 350 ml, safe in the dishwasher.', 'Made by hand, 300 ml, microwave safe.')}</p><p>${W(o, 'Ships in two days.', 'Free delivery.')}</p><div class="buy"></div></div></div>`),
};
