/** The hello-command example: one command, one setting. */
import { definePlugin } from 'plinth/sdk';

export default definePlugin({
  setup(kernel, ctx) {
    const greeting = typeof ctx.settings.greeting === 'string' ? ctx.settings.greeting : 'Hello';
    kernel.hooks.commands.tap((registry) =>
      registry.add({
        name: 'hello',
        args: [{ name: 'name', description: 'Who to greet (default: world)' }],
        run({ args, json, out }) {
          const text = `${greeting}, ${args[0] ?? 'world'}!`;
          if (json) out.json({ greeting: text });
          else out.print(text);
        },
      }),
    );
  },
});
