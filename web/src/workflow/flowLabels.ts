import { useMemo } from 'react'
import { useTranslation } from 'react-i18next'
import type { ReactFlowProps } from '@xyflow/react'

type AriaLabels = NonNullable<ReactFlowProps['ariaLabelConfig']>

/**
 * useFlowLabels is React Flow's own accessible names and screen-reader
 * descriptions (its controls, mini map, handles, the keyboard help of
 * nodes and edges) in the studio's language: @xyflow/react ships them in
 * English only, so without this a 日本語 canvas says "Zoom In".
 */
export function useFlowLabels(): AriaLabels {
  const { t, i18n } = useTranslation()
  return useMemo<AriaLabels>(
    () => ({
      'node.a11yDescription.default': t('workflow.flow.nodeHelp'),
      'node.a11yDescription.keyboardDisabled': t('workflow.flow.nodeMoveHelp'),
      'node.a11yDescription.ariaLiveMessage': ({ direction, x, y }) =>
        t('workflow.flow.moved', { direction: t(`workflow.flow.direction.${direction}`, { defaultValue: direction }), x, y }),
      'edge.a11yDescription.default': t('workflow.flow.edgeHelp'),
      'controls.ariaLabel': t('workflow.flow.controls'),
      'controls.zoomIn.ariaLabel': t('workflow.flow.zoomIn'),
      'controls.zoomOut.ariaLabel': t('workflow.flow.zoomOut'),
      'controls.fitView.ariaLabel': t('workflow.flow.fitView'),
      'controls.interactive.ariaLabel': t('workflow.flow.interactive'),
      'minimap.ariaLabel': t('workflow.flow.minimap'),
      'handle.ariaLabel': t('workflow.flow.handle'),
    }),
    [t, i18n.language],
  )
}
