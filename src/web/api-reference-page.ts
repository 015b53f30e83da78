// GET /api/docs: the REST API reference, Swagger UI over /api/openapi.json, all served locally.
import { ASSETS_PATH } from './swagger-ui-assets.js'

export function apiReferencePage(): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>sms-channel-gateway REST API reference</title>
    <link rel="icon" type="image/png" href="${ASSETS_PATH}/favicon-32x32.png" />
    <link rel="stylesheet" href="${ASSETS_PATH}/swagger-ui.css" />
    <style>body { margin: 0; } .topbar-note { font: 14px system-ui, sans-serif; padding: 0.6rem 1.2rem; background: #1b1b1b; color: #eee; } .topbar-note a { color: #8fd; }</style>
  </head>
  <body>
    <div class="topbar-note"><a href="/">sms-channel-gateway</a> · <a href="/api/openapi.json">openapi.json</a> · <a href="/graphql">GraphiQL</a></div>
    <div id="swagger-ui"></div>
    <script src="${ASSETS_PATH}/swagger-ui-bundle.js"></script>
    <script>
      window.ui = SwaggerUIBundle({
        url: '/api/openapi.json',
        dom_id: '#swagger-ui',
        deepLinking: true,
        // The default validator badge calls validator.swagger.io: nothing here may leave the machine.
        validatorUrl: null,
        presets: [SwaggerUIBundle.presets.apis],
        layout: 'BaseLayout',
        persistAuthorization: false,
      })
    </script>
  </body>
</html>
`
}
