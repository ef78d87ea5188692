/**
 * The Settings Editor's defaults for `%%fuxi` cells (schema/plugin.json): the model, the
 * permission mode, a budget per cell, the effort and the replay mode. The extension sends
 * the ones set (not empty) to each kernel, in its hello and again when they change; the
 * kernel takes them under a cell's own options and `%fuxi config`
 * (notebook/extension/settings.py checks each value, as `%fuxi config` would).
 */
import type { ISettingRegistry } from '@jupyterlab/settingregistry';

import { JSONObject, warn } from './util';

export const PLUGIN_ID = 'fuxi-notebook:plugin';

/** The setting names of the schema, as the kernel reads them. */
const NAMES = ['model', 'permissionMode', 'maxBudgetUsd', 'effort', 'replay'];

/** The settings as the kernel is told them: only those set. */
export function kernelSettings(composite: unknown): JSONObject {
  const chosen: JSONObject = {};
  if (typeof composite !== 'object' || composite === null) {
    return chosen;
  }
  const values = composite as JSONObject;
  for (const name of NAMES) {
    const value = values[name];
    if ((typeof value === 'string' && value.trim()) || (typeof value === 'number' && value > 0)) {
      chosen[name] = typeof value === 'string' ? value.trim() : value;
    }
  }
  return chosen;
}

/** The current settings and who wants to hear of a change. */
export class FuxiSettings {
  values: JSONObject = {};
  private readonly listeners = new Set<() => void>();

  /** Follow the registry's settings of this plugin (none: nothing is ever sent). */
  async load(registry: ISettingRegistry | null): Promise<void> {
    if (!registry) {
      return;
    }
    try {
      const settings = await registry.load(PLUGIN_ID);
      const update = (): void => {
        this.values = kernelSettings(settings.composite);
        for (const listener of this.listeners) {
          try {
            listener();
          } catch (error) {
            warn('could not send the settings', error);
          }
        }
      };
      settings.changed.connect(update);
      update();
    } catch (error) {
      warn('could not read the Fuxi settings', error);
    }
  }

  onChange(listener: () => void): void {
    this.listeners.add(listener);
  }
}
