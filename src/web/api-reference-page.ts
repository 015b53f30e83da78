// GET /api/docs: the REST API reference, Swagger UI over /api/openapi.json, all served locally.
import { ASSETS_PATH } from './swagger-ui-assets.js'
import { FAVICON_LINK } from './favicon.js'

export function apiReferencePage(): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>sms-channel-gateway REST API reference</title>
    ${FAVICON_LINK}
    <link rel="stylesheet" href="${ASSETS_PATH}/swagger-ui.css" />
    <style>
      body { margin: 0; }
      .topbar-note { font: 14px system-ui, sans-serif; padding: 0.6rem 1.2rem; background: #1b1b1b; color: #eee; }
      .topbar-note a { color: #8fd; }
      /* Swagger UI's own colours fail WCAG AA contrast (axe: color-contrast); the same hues, darker. */
      .swagger-ui .opblock.opblock-get .opblock-summary-method { background: #1d6fb8; }
      .swagger-ui .opblock.opblock-post .opblock-summary-method { background: #1a7f4f; }
      .swagger-ui .opblock.opblock-put .opblock-summary-method { background: #a15c00; }
      .swagger-ui .opblock.opblock-patch .opblock-summary-method { background: #137a66; }
      .swagger-ui .opblock.opblock-delete .opblock-summary-method { background: #c0262d; }
      .swagger-ui .btn.authorize { color: #1a7f4f; border-color: #1a7f4f; }
      .swagger-ui .btn.authorize svg { fill: #1a7f4f; }
      .swagger-ui .info .title small { background: #5b6270; }
      .swagger-ui .info .title small.version-stamp { background: #4a6e00; }
      .swagger-ui .info .base-url, .swagger-ui .info .url, .swagger-ui .info a { color: #1d5fa8; }
      .swagger-ui .json-schema-2020-12-expand-deep-button { color: #505050; }
      .swagger-ui .parameter__in { color: #555; }
      .swagger-ui .btn.execute { background: #1d5fa8; border-color: #1d5fa8; }
      .swagger-ui .btn.cancel { color: #b3232a; border-color: #b3232a; }
      .swagger-ui .try-out__btn { color: #333; border-color: #555; }
      .swagger-ui .download-contents { background: #555b68; }
    </style>
  </head>
  <body>
    <div class="topbar-note"><a href="/">sms-channel-gateway</a> · <a href="/api/openapi.json">openapi.json</a> · <a href="/graphql">GraphiQL</a></div>
    <div id="swagger-ui"></div>
    <script src="${ASSETS_PATH}/swagger-ui-bundle.js"></script>
    <script>
      window.ui = SwaggerUIBundle({
        url: '/api/openapi.json',
        dom_id: '#swagger-ui',
        // Deep links put an anchor inside each operation's expand button (axe: nested-interactive).
        deepLinking: false,
        // The default validator badge calls validator.swagger.io: nothing here may leave the machine.
        validatorUrl: null,
        presets: [SwaggerUIBundle.presets.apis],
        layout: 'BaseLayout',
        persistAuthorization: false,
        // The highlighter's palette fails contrast on its dark background; plain text does not.
        syntaxHighlight: { activated: false },
      })
      // Controls Swagger UI renders without a name (axe: select-name, label, button-name), and the
      // key dialog's submit button whose name does not contain its text (label-content-name-mismatch).
      // Operations render as they open, so an observer names each as it appears.
      const named = (element, name) => {
        if (!element.hasAttribute('aria-label') && !element.labels?.length) element.setAttribute('aria-label', name)
      }
      new MutationObserver(() => {
        // Its <label> is an empty wrapper: it counts as a label but gives no name.
        const servers = document.getElementById('servers')
        if (servers && !servers.hasAttribute('aria-label')) servers.setAttribute('aria-label', 'Server')
        for (const body of document.querySelectorAll('.swagger-ui .body-param textarea')) named(body, 'Request body')
        for (const area of document.querySelectorAll('.swagger-ui textarea')) named(area, 'Value')
        for (const close of document.querySelectorAll('.swagger-ui .close-modal')) named(close, 'Close')
        for (const submit of document.querySelectorAll('.swagger-ui .auth-btn-wrapper button[aria-label]')) {
          if (!submit.getAttribute('aria-label').includes(submit.textContent.trim())) submit.removeAttribute('aria-label')
        }
      }).observe(document.body, { subtree: true, childList: true })
    </script>
  </body>
</html>
`
}
