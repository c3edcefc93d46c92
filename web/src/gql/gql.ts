/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  query DayHealthChanges($id: UUID!, $since: DateTime!, $until: DateTime!) {\n    customer(id: $id) {\n      id\n      healthChanges(since: $since, until: $until, first: 25) {\n        nodes {\n          id\n          computedAt\n          score {\n            from\n            to\n            change\n          }\n          churnProbability {\n            from\n            to\n            change\n          }\n          drivers {\n            input\n            label\n            from\n            to\n            score\n            churnProbability\n            dimensions {\n              key\n              points\n            }\n            sources {\n              type\n              kind\n              occurredAt\n              usageEvent\n              provider\n              eventType\n              providerEventId\n              receivedAt\n              actor\n              bodyRetained\n              body\n            }\n          }\n        }\n      }\n    }\n  }\n": typeof types.DayHealthChangesDocument,
    "\n  query WebhookEventTypes {\n    webhookEventTypes {\n      name\n      description\n    }\n  }\n": typeof types.WebhookEventTypesDocument,
    "\n  query WebhookEventTypeSchemas {\n    webhookEventTypes {\n      name\n      schema\n    }\n  }\n": typeof types.WebhookEventTypeSchemasDocument,
    "\n  mutation SignOut {\n    signOut\n  }\n": typeof types.SignOutDocument,
    "\n  query Viewer {\n    viewer {\n      kind\n      tenant {\n        id\n        name\n        plan\n        apiAccess\n        deletion {\n          dueAt\n        }\n        silentIntegrations {\n          provider\n          silentSince\n        }\n      }\n      user {\n        id\n        email\n        role\n      }\n    }\n  }\n": typeof types.ViewerDocument,
    "\n  fragment AlertFields on Alert {\n    id\n    alertType\n    severity\n    status\n    title\n    message\n    createdAt\n  }\n": typeof types.AlertFieldsFragmentDoc,
    "\n  query AlertInbox($first: Int, $after: String, $status: AlertStatus, $severity: AlertSeverity, $alertType: AlertType, $customerId: UUID) {\n    alerts(first: $first, after: $after, status: $status, severity: $severity, alertType: $alertType, customerId: $customerId) {\n      totalCount\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n      nodes {\n        ...AlertFields\n        acknowledgedAt\n        snoozedUntil\n        resolvedAt\n        customer {\n          id\n          name\n        }\n      }\n    }\n  }\n": typeof types.AlertInboxDocument,
    "\n  query CustomerLookup($search: String) {\n    customers(search: $search, first: 8, orderBy: { field: name, direction: asc }) {\n      nodes {\n        id\n        name\n      }\n    }\n  }\n": typeof types.CustomerLookupDocument,
    "\n  query CustomerName($id: UUID!) {\n    customer(id: $id) {\n      id\n      name\n    }\n  }\n": typeof types.CustomerNameDocument,
    "\n  mutation UpdateAlert($id: UUID!, $input: UpdateAlertInput!) {\n    updateAlert(id: $id, input: $input) {\n      id\n      status\n      acknowledgedAt\n      snoozedUntil\n      resolvedAt\n      updatedAt\n    }\n  }\n": typeof types.UpdateAlertDocument,
    "\n  mutation EraseCustomer($id: UUID!) {\n    deleteCustomer(id: $id) {\n      id\n      externalId\n    }\n  }\n": typeof types.EraseCustomerDocument,
    "\n  query CustomerPage($id: UUID!) {\n    customer(id: $id) {\n      id\n      name\n      domain\n      email\n      externalId\n      createdAt\n      identities {\n        provider\n        externalId\n      }\n      health {\n        score\n        status\n        computedAt\n        weakestDimension\n        trend {\n          d7\n          d30\n        }\n        dimensions {\n          key\n          score\n          weight\n          trend\n          signals {\n            key\n            label\n            value\n          }\n          stale\n          staleSources\n        }\n        confidence\n      }\n      churnPrediction {\n        probability\n        riskLevel\n        modelVersion\n        predictedAt\n        riskFactors {\n          code\n          description\n          impact\n        }\n        recommendedInterventions {\n          code\n          title\n          description\n          priority\n        }\n      }\n      healthHistory(first: 90) {\n        nodes {\n          day\n          score\n          churnProbability\n          usage\n          engagement\n          support\n          billing\n          growth\n        }\n      }\n      recentEvents(first: 20) {\n        id\n        kind\n        label\n        source\n        occurredAt\n        value\n        sentiment\n        attributes\n      }\n    }\n    alerts(customerId: $id, first: 10) {\n      totalCount\n      nodes {\n        ...AlertFields\n      }\n    }\n  }\n": typeof types.CustomerPageDocument,
    "\n  mutation RecordOutcome($customerId: UUID!, $churned: Boolean!) {\n    recordChurnOutcome(customerId: $customerId, churned: $churned) {\n      churned\n      at\n    }\n  }\n": typeof types.RecordOutcomeDocument,
    "\n  subscription CustomerChanged($customerId: UUID!) {\n    customerChanged(customerId: $customerId) {\n      id\n    }\n  }\n": typeof types.CustomerChangedDocument,
    "\n  query Portfolio {\n    portfolio {\n      customers\n      healthy\n      neutral\n      atRisk\n      unscored\n      highRisk\n      averageScore\n      openAlerts\n      criticalAlerts\n    }\n  }\n": typeof types.PortfolioDocument,
    "\n  query CustomerTable(\n    $first: Int\n    $after: String\n    $search: String\n    $healthStatus: HealthStatus\n    $riskLevel: RiskLevel\n    $orderBy: CustomerOrder\n  ) {\n    customers(first: $first, after: $after, search: $search, healthStatus: $healthStatus, riskLevel: $riskLevel, orderBy: $orderBy) {\n      totalCount\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n      nodes {\n        id\n        name\n        domain\n        externalId\n        healthScore\n        healthStatus\n        churnProbability\n        churnRiskLevel\n        createdAt\n        health {\n          weakestDimension\n          trend {\n            d7\n            d30\n          }\n        }\n      }\n    }\n  }\n": typeof types.CustomerTableDocument,
    "\n  subscription CustomerRowChanged {\n    customerChanged {\n      id\n      customerId\n      customer {\n        id\n        name\n        domain\n        externalId\n        healthScore\n        healthStatus\n        churnProbability\n        churnRiskLevel\n        createdAt\n        health {\n          weakestDimension\n          trend {\n            d7\n            d30\n          }\n        }\n      }\n    }\n  }\n": typeof types.CustomerRowChangedDocument,
    "\n  mutation Login($email: String!, $password: String!) {\n    login(email: $email, password: $password) {\n      token\n      expiresAt\n    }\n  }\n": typeof types.LoginDocument,
    "\n  query ApiKeys {\n    apiKeys {\n      id\n      name\n      prefix\n      status\n      createdAt\n      lastUsedAt\n      expiresAt\n      revokedAt\n    }\n  }\n": typeof types.ApiKeysDocument,
    "\n  mutation CreateApiKey($name: String!, $expiresAt: DateTime) {\n    createApiKey(name: $name, expiresAt: $expiresAt) {\n      secret\n      apiKey {\n        id\n        name\n        prefix\n      }\n    }\n  }\n": typeof types.CreateApiKeyDocument,
    "\n  mutation RevokeApiKey($id: UUID!) {\n    revokeApiKey(id: $id) {\n      id\n      status\n      revokedAt\n    }\n  }\n": typeof types.RevokeApiKeyDocument,
    "\n  mutation RotateApiKey($id: UUID!, $gracePeriodHours: Int) {\n    rotateApiKey(id: $id, gracePeriodHours: $gracePeriodHours) {\n      secret\n      apiKey {\n        id\n        name\n        prefix\n      }\n    }\n  }\n": typeof types.RotateApiKeyDocument,
    "\n  query AuditLog($first: Int, $after: String, $action: String, $targetId: String, $since: DateTime, $until: DateTime) {\n    auditActions\n    auditEvents(first: $first, after: $after, action: $action, targetId: $targetId, since: $since, until: $until) {\n      totalCount\n      nodes {\n        id\n        occurredAt\n        action\n        actorType\n        actorLabel\n        clientAddress\n        targetType\n        targetId\n        changes\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n": typeof types.AuditLogDocument,
    "\n  query Retention {\n    retention {\n      key\n      days\n      defaultDays\n      minDays\n      maxDays\n      isDefault\n      description\n    }\n  }\n": typeof types.RetentionDocument,
    "\n  mutation SaveRetention($input: RetentionInput!) {\n    setRetention(input: $input) {\n      key\n      days\n      isDefault\n    }\n  }\n": typeof types.SaveRetentionDocument,
    "\n  query WorkspaceDeletion {\n    workspace {\n      id\n      name\n      deletion {\n        requestedAt\n        dueAt\n        requestedBy\n      }\n    }\n  }\n": typeof types.WorkspaceDeletionDocument,
    "\n  mutation DeleteWorkspace($confirmName: String!) {\n    deleteWorkspace(confirmName: $confirmName) {\n      id\n      deletion {\n        requestedAt\n        dueAt\n        requestedBy\n      }\n    }\n  }\n": typeof types.DeleteWorkspaceDocument,
    "\n  mutation CancelWorkspaceDeletion {\n    cancelWorkspaceDeletion {\n      id\n      deletion {\n        dueAt\n      }\n    }\n  }\n": typeof types.CancelWorkspaceDeletionDocument,
    "\n  query Integrations {\n    integrations {\n      provider\n      inboundPath\n      secretSet\n      verifyTokenSet\n      previousSecretValidUntil\n      lastEvent {\n        id\n        eventType\n        status\n        receivedAt\n      }\n      freshness {\n        usualGapSeconds\n        silentAfterSeconds\n        silent\n        silentSince\n      }\n    }\n  }\n": typeof types.IntegrationsDocument,
    "\n  mutation SetInboundSecret($provider: Provider!, $secret: String, $verifyToken: String) {\n    setInboundSecret(provider: $provider, secret: $secret, verifyToken: $verifyToken) {\n      provider\n      secret\n      rotated\n    }\n  }\n": typeof types.SetInboundSecretDocument,
    "\n  fragment WeightsFields on HealthWeights {\n    usage\n    engagement\n    support\n    billing\n    growth\n    isDefault\n  }\n": typeof types.WeightsFieldsFragmentDoc,
    "\n  query ScoringSettings {\n    healthWeights {\n      ...WeightsFields\n    }\n    churnModel {\n      modelVersion\n      kind\n      trainedAt\n      intercept\n      features {\n        code\n        description\n        coefficient\n        baseline\n      }\n      metrics {\n        auc\n        brier\n        baselineAuc\n        baselineBrier\n        baselineModelVersion\n        samples\n        churned\n        holdout\n        logLoss\n        lambda\n        reliability {\n          predicted\n          observed\n          count\n        }\n      }\n    }\n  }\n": typeof types.ScoringSettingsDocument,
    "\n  mutation SetHealthWeights($input: HealthWeightsInput!) {\n    setHealthWeights(input: $input) {\n      ...WeightsFields\n    }\n  }\n": typeof types.SetHealthWeightsDocument,
    "\n  mutation ResetHealthWeights {\n    resetHealthWeights {\n      ...WeightsFields\n    }\n  }\n": typeof types.ResetHealthWeightsDocument,
    "\n  mutation TrainChurnModel {\n    trainChurnModel(activate: false) {\n      modelVersion\n      kind\n      eligible\n      activated\n      auc\n      brier\n      baselineAuc\n      baselineBrier\n      baselineModelVersion\n      samples\n      churned\n      holdout\n      logLoss\n      lambda\n      reliability {\n        predicted\n        observed\n        count\n      }\n    }\n  }\n": typeof types.TrainChurnModelDocument,
    "\n  mutation ActivateChurnModel($modelVersion: String!) {\n    activateChurnModel(modelVersion: $modelVersion) {\n      modelVersion\n    }\n  }\n": typeof types.ActivateChurnModelDocument,
    "\n  mutation ResetChurnModel {\n    resetChurnModel {\n      modelVersion\n    }\n  }\n": typeof types.ResetChurnModelDocument,
    "\n  query WebhookEndpoint($id: UUID!) {\n    webhookEndpoint(id: $id) {\n      ...EndpointFields\n      previousSecretValidUntil\n      previousPublicKey\n      rateLimitPerSecond\n      filters\n      updatedAt\n    }\n  }\n": typeof types.WebhookEndpointDocument,
    "\n  query WebhookDeliveries($endpointId: UUID!, $first: Int, $after: String) {\n    webhookDeliveries(endpointId: $endpointId, first: $first, after: $after) {\n      totalCount\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n      nodes {\n        id\n        eventType\n        status\n        isTest\n        attempts\n        lastStatusCode\n        lastError\n        nextAttemptAt\n        createdAt\n        envelope\n        attemptLog {\n          attempt\n          startedAt\n          durationMs\n          statusCode\n          error\n          responseBody\n        }\n      }\n    }\n  }\n": typeof types.WebhookDeliveriesDocument,
    "\n  mutation UpdateWebhookEndpoint($id: UUID!, $input: WebhookEndpointInput!) {\n    updateWebhookEndpoint(id: $id, input: $input) {\n      ...EndpointFields\n      rateLimitPerSecond\n      filters\n      updatedAt\n    }\n  }\n": typeof types.UpdateWebhookEndpointDocument,
    "\n  mutation TestWebhookEndpoint($id: UUID!, $event: String) {\n    testWebhookEndpoint(id: $id, event: $event) {\n      deliveryId\n      event\n      success\n      statusCode\n      durationMs\n      error\n    }\n  }\n": typeof types.TestWebhookEndpointDocument,
    "\n  mutation RotateWebhookSecret($id: UUID!) {\n    rotateWebhookEndpointSecret(id: $id) {\n      secret\n      endpoint {\n        id\n        previousSecretValidUntil\n      }\n    }\n  }\n": typeof types.RotateWebhookSecretDocument,
    "\n  mutation DeleteWebhookEndpoint($id: UUID!) {\n    deleteWebhookEndpoint(id: $id)\n  }\n": typeof types.DeleteWebhookEndpointDocument,
    "\n  mutation ResendWebhookDelivery($id: UUID!) {\n    resendWebhookDelivery(id: $id)\n  }\n": typeof types.ResendWebhookDeliveryDocument,
    "\n  mutation ReplayWebhookDeliveries($endpointId: UUID!, $since: DateTime!) {\n    replayWebhookDeliveries(endpointId: $endpointId, since: $since)\n  }\n": typeof types.ReplayWebhookDeliveriesDocument,
    "\n  fragment EndpointFields on WebhookEndpoint {\n    id\n    url\n    description\n    events\n    enabled\n    disabledReason\n    signatureScheme\n    publicKey\n    lastSuccessAt\n    createdAt\n  }\n": typeof types.EndpointFieldsFragmentDoc,
    "\n  query WebhookEndpoints {\n    webhookEndpoints {\n      ...EndpointFields\n    }\n  }\n": typeof types.WebhookEndpointsDocument,
    "\n  mutation CreateWebhookEndpoint($input: WebhookEndpointInput!) {\n    createWebhookEndpoint(input: $input) {\n      secret\n      endpoint {\n        id\n        url\n      }\n    }\n  }\n": typeof types.CreateWebhookEndpointDocument,
};
const documents: Documents = {
    "\n  query DayHealthChanges($id: UUID!, $since: DateTime!, $until: DateTime!) {\n    customer(id: $id) {\n      id\n      healthChanges(since: $since, until: $until, first: 25) {\n        nodes {\n          id\n          computedAt\n          score {\n            from\n            to\n            change\n          }\n          churnProbability {\n            from\n            to\n            change\n          }\n          drivers {\n            input\n            label\n            from\n            to\n            score\n            churnProbability\n            dimensions {\n              key\n              points\n            }\n            sources {\n              type\n              kind\n              occurredAt\n              usageEvent\n              provider\n              eventType\n              providerEventId\n              receivedAt\n              actor\n              bodyRetained\n              body\n            }\n          }\n        }\n      }\n    }\n  }\n": types.DayHealthChangesDocument,
    "\n  query WebhookEventTypes {\n    webhookEventTypes {\n      name\n      description\n    }\n  }\n": types.WebhookEventTypesDocument,
    "\n  query WebhookEventTypeSchemas {\n    webhookEventTypes {\n      name\n      schema\n    }\n  }\n": types.WebhookEventTypeSchemasDocument,
    "\n  mutation SignOut {\n    signOut\n  }\n": types.SignOutDocument,
    "\n  query Viewer {\n    viewer {\n      kind\n      tenant {\n        id\n        name\n        plan\n        apiAccess\n        deletion {\n          dueAt\n        }\n        silentIntegrations {\n          provider\n          silentSince\n        }\n      }\n      user {\n        id\n        email\n        role\n      }\n    }\n  }\n": types.ViewerDocument,
    "\n  fragment AlertFields on Alert {\n    id\n    alertType\n    severity\n    status\n    title\n    message\n    createdAt\n  }\n": types.AlertFieldsFragmentDoc,
    "\n  query AlertInbox($first: Int, $after: String, $status: AlertStatus, $severity: AlertSeverity, $alertType: AlertType, $customerId: UUID) {\n    alerts(first: $first, after: $after, status: $status, severity: $severity, alertType: $alertType, customerId: $customerId) {\n      totalCount\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n      nodes {\n        ...AlertFields\n        acknowledgedAt\n        snoozedUntil\n        resolvedAt\n        customer {\n          id\n          name\n        }\n      }\n    }\n  }\n": types.AlertInboxDocument,
    "\n  query CustomerLookup($search: String) {\n    customers(search: $search, first: 8, orderBy: { field: name, direction: asc }) {\n      nodes {\n        id\n        name\n      }\n    }\n  }\n": types.CustomerLookupDocument,
    "\n  query CustomerName($id: UUID!) {\n    customer(id: $id) {\n      id\n      name\n    }\n  }\n": types.CustomerNameDocument,
    "\n  mutation UpdateAlert($id: UUID!, $input: UpdateAlertInput!) {\n    updateAlert(id: $id, input: $input) {\n      id\n      status\n      acknowledgedAt\n      snoozedUntil\n      resolvedAt\n      updatedAt\n    }\n  }\n": types.UpdateAlertDocument,
    "\n  mutation EraseCustomer($id: UUID!) {\n    deleteCustomer(id: $id) {\n      id\n      externalId\n    }\n  }\n": types.EraseCustomerDocument,
    "\n  query CustomerPage($id: UUID!) {\n    customer(id: $id) {\n      id\n      name\n      domain\n      email\n      externalId\n      createdAt\n      identities {\n        provider\n        externalId\n      }\n      health {\n        score\n        status\n        computedAt\n        weakestDimension\n        trend {\n          d7\n          d30\n        }\n        dimensions {\n          key\n          score\n          weight\n          trend\n          signals {\n            key\n            label\n            value\n          }\n          stale\n          staleSources\n        }\n        confidence\n      }\n      churnPrediction {\n        probability\n        riskLevel\n        modelVersion\n        predictedAt\n        riskFactors {\n          code\n          description\n          impact\n        }\n        recommendedInterventions {\n          code\n          title\n          description\n          priority\n        }\n      }\n      healthHistory(first: 90) {\n        nodes {\n          day\n          score\n          churnProbability\n          usage\n          engagement\n          support\n          billing\n          growth\n        }\n      }\n      recentEvents(first: 20) {\n        id\n        kind\n        label\n        source\n        occurredAt\n        value\n        sentiment\n        attributes\n      }\n    }\n    alerts(customerId: $id, first: 10) {\n      totalCount\n      nodes {\n        ...AlertFields\n      }\n    }\n  }\n": types.CustomerPageDocument,
    "\n  mutation RecordOutcome($customerId: UUID!, $churned: Boolean!) {\n    recordChurnOutcome(customerId: $customerId, churned: $churned) {\n      churned\n      at\n    }\n  }\n": types.RecordOutcomeDocument,
    "\n  subscription CustomerChanged($customerId: UUID!) {\n    customerChanged(customerId: $customerId) {\n      id\n    }\n  }\n": types.CustomerChangedDocument,
    "\n  query Portfolio {\n    portfolio {\n      customers\n      healthy\n      neutral\n      atRisk\n      unscored\n      highRisk\n      averageScore\n      openAlerts\n      criticalAlerts\n    }\n  }\n": types.PortfolioDocument,
    "\n  query CustomerTable(\n    $first: Int\n    $after: String\n    $search: String\n    $healthStatus: HealthStatus\n    $riskLevel: RiskLevel\n    $orderBy: CustomerOrder\n  ) {\n    customers(first: $first, after: $after, search: $search, healthStatus: $healthStatus, riskLevel: $riskLevel, orderBy: $orderBy) {\n      totalCount\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n      nodes {\n        id\n        name\n        domain\n        externalId\n        healthScore\n        healthStatus\n        churnProbability\n        churnRiskLevel\n        createdAt\n        health {\n          weakestDimension\n          trend {\n            d7\n            d30\n          }\n        }\n      }\n    }\n  }\n": types.CustomerTableDocument,
    "\n  subscription CustomerRowChanged {\n    customerChanged {\n      id\n      customerId\n      customer {\n        id\n        name\n        domain\n        externalId\n        healthScore\n        healthStatus\n        churnProbability\n        churnRiskLevel\n        createdAt\n        health {\n          weakestDimension\n          trend {\n            d7\n            d30\n          }\n        }\n      }\n    }\n  }\n": types.CustomerRowChangedDocument,
    "\n  mutation Login($email: String!, $password: String!) {\n    login(email: $email, password: $password) {\n      token\n      expiresAt\n    }\n  }\n": types.LoginDocument,
    "\n  query ApiKeys {\n    apiKeys {\n      id\n      name\n      prefix\n      status\n      createdAt\n      lastUsedAt\n      expiresAt\n      revokedAt\n    }\n  }\n": types.ApiKeysDocument,
    "\n  mutation CreateApiKey($name: String!, $expiresAt: DateTime) {\n    createApiKey(name: $name, expiresAt: $expiresAt) {\n      secret\n      apiKey {\n        id\n        name\n        prefix\n      }\n    }\n  }\n": types.CreateApiKeyDocument,
    "\n  mutation RevokeApiKey($id: UUID!) {\n    revokeApiKey(id: $id) {\n      id\n      status\n      revokedAt\n    }\n  }\n": types.RevokeApiKeyDocument,
    "\n  mutation RotateApiKey($id: UUID!, $gracePeriodHours: Int) {\n    rotateApiKey(id: $id, gracePeriodHours: $gracePeriodHours) {\n      secret\n      apiKey {\n        id\n        name\n        prefix\n      }\n    }\n  }\n": types.RotateApiKeyDocument,
    "\n  query AuditLog($first: Int, $after: String, $action: String, $targetId: String, $since: DateTime, $until: DateTime) {\n    auditActions\n    auditEvents(first: $first, after: $after, action: $action, targetId: $targetId, since: $since, until: $until) {\n      totalCount\n      nodes {\n        id\n        occurredAt\n        action\n        actorType\n        actorLabel\n        clientAddress\n        targetType\n        targetId\n        changes\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n": types.AuditLogDocument,
    "\n  query Retention {\n    retention {\n      key\n      days\n      defaultDays\n      minDays\n      maxDays\n      isDefault\n      description\n    }\n  }\n": types.RetentionDocument,
    "\n  mutation SaveRetention($input: RetentionInput!) {\n    setRetention(input: $input) {\n      key\n      days\n      isDefault\n    }\n  }\n": types.SaveRetentionDocument,
    "\n  query WorkspaceDeletion {\n    workspace {\n      id\n      name\n      deletion {\n        requestedAt\n        dueAt\n        requestedBy\n      }\n    }\n  }\n": types.WorkspaceDeletionDocument,
    "\n  mutation DeleteWorkspace($confirmName: String!) {\n    deleteWorkspace(confirmName: $confirmName) {\n      id\n      deletion {\n        requestedAt\n        dueAt\n        requestedBy\n      }\n    }\n  }\n": types.DeleteWorkspaceDocument,
    "\n  mutation CancelWorkspaceDeletion {\n    cancelWorkspaceDeletion {\n      id\n      deletion {\n        dueAt\n      }\n    }\n  }\n": types.CancelWorkspaceDeletionDocument,
    "\n  query Integrations {\n    integrations {\n      provider\n      inboundPath\n      secretSet\n      verifyTokenSet\n      previousSecretValidUntil\n      lastEvent {\n        id\n        eventType\n        status\n        receivedAt\n      }\n      freshness {\n        usualGapSeconds\n        silentAfterSeconds\n        silent\n        silentSince\n      }\n    }\n  }\n": types.IntegrationsDocument,
    "\n  mutation SetInboundSecret($provider: Provider!, $secret: String, $verifyToken: String) {\n    setInboundSecret(provider: $provider, secret: $secret, verifyToken: $verifyToken) {\n      provider\n      secret\n      rotated\n    }\n  }\n": types.SetInboundSecretDocument,
    "\n  fragment WeightsFields on HealthWeights {\n    usage\n    engagement\n    support\n    billing\n    growth\n    isDefault\n  }\n": types.WeightsFieldsFragmentDoc,
    "\n  query ScoringSettings {\n    healthWeights {\n      ...WeightsFields\n    }\n    churnModel {\n      modelVersion\n      kind\n      trainedAt\n      intercept\n      features {\n        code\n        description\n        coefficient\n        baseline\n      }\n      metrics {\n        auc\n        brier\n        baselineAuc\n        baselineBrier\n        baselineModelVersion\n        samples\n        churned\n        holdout\n        logLoss\n        lambda\n        reliability {\n          predicted\n          observed\n          count\n        }\n      }\n    }\n  }\n": types.ScoringSettingsDocument,
    "\n  mutation SetHealthWeights($input: HealthWeightsInput!) {\n    setHealthWeights(input: $input) {\n      ...WeightsFields\n    }\n  }\n": types.SetHealthWeightsDocument,
    "\n  mutation ResetHealthWeights {\n    resetHealthWeights {\n      ...WeightsFields\n    }\n  }\n": types.ResetHealthWeightsDocument,
    "\n  mutation TrainChurnModel {\n    trainChurnModel(activate: false) {\n      modelVersion\n      kind\n      eligible\n      activated\n      auc\n      brier\n      baselineAuc\n      baselineBrier\n      baselineModelVersion\n      samples\n      churned\n      holdout\n      logLoss\n      lambda\n      reliability {\n        predicted\n        observed\n        count\n      }\n    }\n  }\n": types.TrainChurnModelDocument,
    "\n  mutation ActivateChurnModel($modelVersion: String!) {\n    activateChurnModel(modelVersion: $modelVersion) {\n      modelVersion\n    }\n  }\n": types.ActivateChurnModelDocument,
    "\n  mutation ResetChurnModel {\n    resetChurnModel {\n      modelVersion\n    }\n  }\n": types.ResetChurnModelDocument,
    "\n  query WebhookEndpoint($id: UUID!) {\n    webhookEndpoint(id: $id) {\n      ...EndpointFields\n      previousSecretValidUntil\n      previousPublicKey\n      rateLimitPerSecond\n      filters\n      updatedAt\n    }\n  }\n": types.WebhookEndpointDocument,
    "\n  query WebhookDeliveries($endpointId: UUID!, $first: Int, $after: String) {\n    webhookDeliveries(endpointId: $endpointId, first: $first, after: $after) {\n      totalCount\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n      nodes {\n        id\n        eventType\n        status\n        isTest\n        attempts\n        lastStatusCode\n        lastError\n        nextAttemptAt\n        createdAt\n        envelope\n        attemptLog {\n          attempt\n          startedAt\n          durationMs\n          statusCode\n          error\n          responseBody\n        }\n      }\n    }\n  }\n": types.WebhookDeliveriesDocument,
    "\n  mutation UpdateWebhookEndpoint($id: UUID!, $input: WebhookEndpointInput!) {\n    updateWebhookEndpoint(id: $id, input: $input) {\n      ...EndpointFields\n      rateLimitPerSecond\n      filters\n      updatedAt\n    }\n  }\n": types.UpdateWebhookEndpointDocument,
    "\n  mutation TestWebhookEndpoint($id: UUID!, $event: String) {\n    testWebhookEndpoint(id: $id, event: $event) {\n      deliveryId\n      event\n      success\n      statusCode\n      durationMs\n      error\n    }\n  }\n": types.TestWebhookEndpointDocument,
    "\n  mutation RotateWebhookSecret($id: UUID!) {\n    rotateWebhookEndpointSecret(id: $id) {\n      secret\n      endpoint {\n        id\n        previousSecretValidUntil\n      }\n    }\n  }\n": types.RotateWebhookSecretDocument,
    "\n  mutation DeleteWebhookEndpoint($id: UUID!) {\n    deleteWebhookEndpoint(id: $id)\n  }\n": types.DeleteWebhookEndpointDocument,
    "\n  mutation ResendWebhookDelivery($id: UUID!) {\n    resendWebhookDelivery(id: $id)\n  }\n": types.ResendWebhookDeliveryDocument,
    "\n  mutation ReplayWebhookDeliveries($endpointId: UUID!, $since: DateTime!) {\n    replayWebhookDeliveries(endpointId: $endpointId, since: $since)\n  }\n": types.ReplayWebhookDeliveriesDocument,
    "\n  fragment EndpointFields on WebhookEndpoint {\n    id\n    url\n    description\n    events\n    enabled\n    disabledReason\n    signatureScheme\n    publicKey\n    lastSuccessAt\n    createdAt\n  }\n": types.EndpointFieldsFragmentDoc,
    "\n  query WebhookEndpoints {\n    webhookEndpoints {\n      ...EndpointFields\n    }\n  }\n": types.WebhookEndpointsDocument,
    "\n  mutation CreateWebhookEndpoint($input: WebhookEndpointInput!) {\n    createWebhookEndpoint(input: $input) {\n      secret\n      endpoint {\n        id\n        url\n      }\n    }\n  }\n": types.CreateWebhookEndpointDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DayHealthChanges($id: UUID!, $since: DateTime!, $until: DateTime!) {\n    customer(id: $id) {\n      id\n      healthChanges(since: $since, until: $until, first: 25) {\n        nodes {\n          id\n          computedAt\n          score {\n            from\n            to\n            change\n          }\n          churnProbability {\n            from\n            to\n            change\n          }\n          drivers {\n            input\n            label\n            from\n            to\n            score\n            churnProbability\n            dimensions {\n              key\n              points\n            }\n            sources {\n              type\n              kind\n              occurredAt\n              usageEvent\n              provider\n              eventType\n              providerEventId\n              receivedAt\n              actor\n              bodyRetained\n              body\n            }\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query DayHealthChanges($id: UUID!, $since: DateTime!, $until: DateTime!) {\n    customer(id: $id) {\n      id\n      healthChanges(since: $since, until: $until, first: 25) {\n        nodes {\n          id\n          computedAt\n          score {\n            from\n            to\n            change\n          }\n          churnProbability {\n            from\n            to\n            change\n          }\n          drivers {\n            input\n            label\n            from\n            to\n            score\n            churnProbability\n            dimensions {\n              key\n              points\n            }\n            sources {\n              type\n              kind\n              occurredAt\n              usageEvent\n              provider\n              eventType\n              providerEventId\n              receivedAt\n              actor\n              bodyRetained\n              body\n            }\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WebhookEventTypes {\n    webhookEventTypes {\n      name\n      description\n    }\n  }\n"): (typeof documents)["\n  query WebhookEventTypes {\n    webhookEventTypes {\n      name\n      description\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WebhookEventTypeSchemas {\n    webhookEventTypes {\n      name\n      schema\n    }\n  }\n"): (typeof documents)["\n  query WebhookEventTypeSchemas {\n    webhookEventTypes {\n      name\n      schema\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SignOut {\n    signOut\n  }\n"): (typeof documents)["\n  mutation SignOut {\n    signOut\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Viewer {\n    viewer {\n      kind\n      tenant {\n        id\n        name\n        plan\n        apiAccess\n        deletion {\n          dueAt\n        }\n        silentIntegrations {\n          provider\n          silentSince\n        }\n      }\n      user {\n        id\n        email\n        role\n      }\n    }\n  }\n"): (typeof documents)["\n  query Viewer {\n    viewer {\n      kind\n      tenant {\n        id\n        name\n        plan\n        apiAccess\n        deletion {\n          dueAt\n        }\n        silentIntegrations {\n          provider\n          silentSince\n        }\n      }\n      user {\n        id\n        email\n        role\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment AlertFields on Alert {\n    id\n    alertType\n    severity\n    status\n    title\n    message\n    createdAt\n  }\n"): (typeof documents)["\n  fragment AlertFields on Alert {\n    id\n    alertType\n    severity\n    status\n    title\n    message\n    createdAt\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AlertInbox($first: Int, $after: String, $status: AlertStatus, $severity: AlertSeverity, $alertType: AlertType, $customerId: UUID) {\n    alerts(first: $first, after: $after, status: $status, severity: $severity, alertType: $alertType, customerId: $customerId) {\n      totalCount\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n      nodes {\n        ...AlertFields\n        acknowledgedAt\n        snoozedUntil\n        resolvedAt\n        customer {\n          id\n          name\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query AlertInbox($first: Int, $after: String, $status: AlertStatus, $severity: AlertSeverity, $alertType: AlertType, $customerId: UUID) {\n    alerts(first: $first, after: $after, status: $status, severity: $severity, alertType: $alertType, customerId: $customerId) {\n      totalCount\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n      nodes {\n        ...AlertFields\n        acknowledgedAt\n        snoozedUntil\n        resolvedAt\n        customer {\n          id\n          name\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query CustomerLookup($search: String) {\n    customers(search: $search, first: 8, orderBy: { field: name, direction: asc }) {\n      nodes {\n        id\n        name\n      }\n    }\n  }\n"): (typeof documents)["\n  query CustomerLookup($search: String) {\n    customers(search: $search, first: 8, orderBy: { field: name, direction: asc }) {\n      nodes {\n        id\n        name\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query CustomerName($id: UUID!) {\n    customer(id: $id) {\n      id\n      name\n    }\n  }\n"): (typeof documents)["\n  query CustomerName($id: UUID!) {\n    customer(id: $id) {\n      id\n      name\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateAlert($id: UUID!, $input: UpdateAlertInput!) {\n    updateAlert(id: $id, input: $input) {\n      id\n      status\n      acknowledgedAt\n      snoozedUntil\n      resolvedAt\n      updatedAt\n    }\n  }\n"): (typeof documents)["\n  mutation UpdateAlert($id: UUID!, $input: UpdateAlertInput!) {\n    updateAlert(id: $id, input: $input) {\n      id\n      status\n      acknowledgedAt\n      snoozedUntil\n      resolvedAt\n      updatedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation EraseCustomer($id: UUID!) {\n    deleteCustomer(id: $id) {\n      id\n      externalId\n    }\n  }\n"): (typeof documents)["\n  mutation EraseCustomer($id: UUID!) {\n    deleteCustomer(id: $id) {\n      id\n      externalId\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query CustomerPage($id: UUID!) {\n    customer(id: $id) {\n      id\n      name\n      domain\n      email\n      externalId\n      createdAt\n      identities {\n        provider\n        externalId\n      }\n      health {\n        score\n        status\n        computedAt\n        weakestDimension\n        trend {\n          d7\n          d30\n        }\n        dimensions {\n          key\n          score\n          weight\n          trend\n          signals {\n            key\n            label\n            value\n          }\n          stale\n          staleSources\n        }\n        confidence\n      }\n      churnPrediction {\n        probability\n        riskLevel\n        modelVersion\n        predictedAt\n        riskFactors {\n          code\n          description\n          impact\n        }\n        recommendedInterventions {\n          code\n          title\n          description\n          priority\n        }\n      }\n      healthHistory(first: 90) {\n        nodes {\n          day\n          score\n          churnProbability\n          usage\n          engagement\n          support\n          billing\n          growth\n        }\n      }\n      recentEvents(first: 20) {\n        id\n        kind\n        label\n        source\n        occurredAt\n        value\n        sentiment\n        attributes\n      }\n    }\n    alerts(customerId: $id, first: 10) {\n      totalCount\n      nodes {\n        ...AlertFields\n      }\n    }\n  }\n"): (typeof documents)["\n  query CustomerPage($id: UUID!) {\n    customer(id: $id) {\n      id\n      name\n      domain\n      email\n      externalId\n      createdAt\n      identities {\n        provider\n        externalId\n      }\n      health {\n        score\n        status\n        computedAt\n        weakestDimension\n        trend {\n          d7\n          d30\n        }\n        dimensions {\n          key\n          score\n          weight\n          trend\n          signals {\n            key\n            label\n            value\n          }\n          stale\n          staleSources\n        }\n        confidence\n      }\n      churnPrediction {\n        probability\n        riskLevel\n        modelVersion\n        predictedAt\n        riskFactors {\n          code\n          description\n          impact\n        }\n        recommendedInterventions {\n          code\n          title\n          description\n          priority\n        }\n      }\n      healthHistory(first: 90) {\n        nodes {\n          day\n          score\n          churnProbability\n          usage\n          engagement\n          support\n          billing\n          growth\n        }\n      }\n      recentEvents(first: 20) {\n        id\n        kind\n        label\n        source\n        occurredAt\n        value\n        sentiment\n        attributes\n      }\n    }\n    alerts(customerId: $id, first: 10) {\n      totalCount\n      nodes {\n        ...AlertFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RecordOutcome($customerId: UUID!, $churned: Boolean!) {\n    recordChurnOutcome(customerId: $customerId, churned: $churned) {\n      churned\n      at\n    }\n  }\n"): (typeof documents)["\n  mutation RecordOutcome($customerId: UUID!, $churned: Boolean!) {\n    recordChurnOutcome(customerId: $customerId, churned: $churned) {\n      churned\n      at\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription CustomerChanged($customerId: UUID!) {\n    customerChanged(customerId: $customerId) {\n      id\n    }\n  }\n"): (typeof documents)["\n  subscription CustomerChanged($customerId: UUID!) {\n    customerChanged(customerId: $customerId) {\n      id\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Portfolio {\n    portfolio {\n      customers\n      healthy\n      neutral\n      atRisk\n      unscored\n      highRisk\n      averageScore\n      openAlerts\n      criticalAlerts\n    }\n  }\n"): (typeof documents)["\n  query Portfolio {\n    portfolio {\n      customers\n      healthy\n      neutral\n      atRisk\n      unscored\n      highRisk\n      averageScore\n      openAlerts\n      criticalAlerts\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query CustomerTable(\n    $first: Int\n    $after: String\n    $search: String\n    $healthStatus: HealthStatus\n    $riskLevel: RiskLevel\n    $orderBy: CustomerOrder\n  ) {\n    customers(first: $first, after: $after, search: $search, healthStatus: $healthStatus, riskLevel: $riskLevel, orderBy: $orderBy) {\n      totalCount\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n      nodes {\n        id\n        name\n        domain\n        externalId\n        healthScore\n        healthStatus\n        churnProbability\n        churnRiskLevel\n        createdAt\n        health {\n          weakestDimension\n          trend {\n            d7\n            d30\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query CustomerTable(\n    $first: Int\n    $after: String\n    $search: String\n    $healthStatus: HealthStatus\n    $riskLevel: RiskLevel\n    $orderBy: CustomerOrder\n  ) {\n    customers(first: $first, after: $after, search: $search, healthStatus: $healthStatus, riskLevel: $riskLevel, orderBy: $orderBy) {\n      totalCount\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n      nodes {\n        id\n        name\n        domain\n        externalId\n        healthScore\n        healthStatus\n        churnProbability\n        churnRiskLevel\n        createdAt\n        health {\n          weakestDimension\n          trend {\n            d7\n            d30\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription CustomerRowChanged {\n    customerChanged {\n      id\n      customerId\n      customer {\n        id\n        name\n        domain\n        externalId\n        healthScore\n        healthStatus\n        churnProbability\n        churnRiskLevel\n        createdAt\n        health {\n          weakestDimension\n          trend {\n            d7\n            d30\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  subscription CustomerRowChanged {\n    customerChanged {\n      id\n      customerId\n      customer {\n        id\n        name\n        domain\n        externalId\n        healthScore\n        healthStatus\n        churnProbability\n        churnRiskLevel\n        createdAt\n        health {\n          weakestDimension\n          trend {\n            d7\n            d30\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Login($email: String!, $password: String!) {\n    login(email: $email, password: $password) {\n      token\n      expiresAt\n    }\n  }\n"): (typeof documents)["\n  mutation Login($email: String!, $password: String!) {\n    login(email: $email, password: $password) {\n      token\n      expiresAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ApiKeys {\n    apiKeys {\n      id\n      name\n      prefix\n      status\n      createdAt\n      lastUsedAt\n      expiresAt\n      revokedAt\n    }\n  }\n"): (typeof documents)["\n  query ApiKeys {\n    apiKeys {\n      id\n      name\n      prefix\n      status\n      createdAt\n      lastUsedAt\n      expiresAt\n      revokedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateApiKey($name: String!, $expiresAt: DateTime) {\n    createApiKey(name: $name, expiresAt: $expiresAt) {\n      secret\n      apiKey {\n        id\n        name\n        prefix\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation CreateApiKey($name: String!, $expiresAt: DateTime) {\n    createApiKey(name: $name, expiresAt: $expiresAt) {\n      secret\n      apiKey {\n        id\n        name\n        prefix\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RevokeApiKey($id: UUID!) {\n    revokeApiKey(id: $id) {\n      id\n      status\n      revokedAt\n    }\n  }\n"): (typeof documents)["\n  mutation RevokeApiKey($id: UUID!) {\n    revokeApiKey(id: $id) {\n      id\n      status\n      revokedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RotateApiKey($id: UUID!, $gracePeriodHours: Int) {\n    rotateApiKey(id: $id, gracePeriodHours: $gracePeriodHours) {\n      secret\n      apiKey {\n        id\n        name\n        prefix\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation RotateApiKey($id: UUID!, $gracePeriodHours: Int) {\n    rotateApiKey(id: $id, gracePeriodHours: $gracePeriodHours) {\n      secret\n      apiKey {\n        id\n        name\n        prefix\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AuditLog($first: Int, $after: String, $action: String, $targetId: String, $since: DateTime, $until: DateTime) {\n    auditActions\n    auditEvents(first: $first, after: $after, action: $action, targetId: $targetId, since: $since, until: $until) {\n      totalCount\n      nodes {\n        id\n        occurredAt\n        action\n        actorType\n        actorLabel\n        clientAddress\n        targetType\n        targetId\n        changes\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n"): (typeof documents)["\n  query AuditLog($first: Int, $after: String, $action: String, $targetId: String, $since: DateTime, $until: DateTime) {\n    auditActions\n    auditEvents(first: $first, after: $after, action: $action, targetId: $targetId, since: $since, until: $until) {\n      totalCount\n      nodes {\n        id\n        occurredAt\n        action\n        actorType\n        actorLabel\n        clientAddress\n        targetType\n        targetId\n        changes\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Retention {\n    retention {\n      key\n      days\n      defaultDays\n      minDays\n      maxDays\n      isDefault\n      description\n    }\n  }\n"): (typeof documents)["\n  query Retention {\n    retention {\n      key\n      days\n      defaultDays\n      minDays\n      maxDays\n      isDefault\n      description\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SaveRetention($input: RetentionInput!) {\n    setRetention(input: $input) {\n      key\n      days\n      isDefault\n    }\n  }\n"): (typeof documents)["\n  mutation SaveRetention($input: RetentionInput!) {\n    setRetention(input: $input) {\n      key\n      days\n      isDefault\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WorkspaceDeletion {\n    workspace {\n      id\n      name\n      deletion {\n        requestedAt\n        dueAt\n        requestedBy\n      }\n    }\n  }\n"): (typeof documents)["\n  query WorkspaceDeletion {\n    workspace {\n      id\n      name\n      deletion {\n        requestedAt\n        dueAt\n        requestedBy\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteWorkspace($confirmName: String!) {\n    deleteWorkspace(confirmName: $confirmName) {\n      id\n      deletion {\n        requestedAt\n        dueAt\n        requestedBy\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation DeleteWorkspace($confirmName: String!) {\n    deleteWorkspace(confirmName: $confirmName) {\n      id\n      deletion {\n        requestedAt\n        dueAt\n        requestedBy\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CancelWorkspaceDeletion {\n    cancelWorkspaceDeletion {\n      id\n      deletion {\n        dueAt\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation CancelWorkspaceDeletion {\n    cancelWorkspaceDeletion {\n      id\n      deletion {\n        dueAt\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Integrations {\n    integrations {\n      provider\n      inboundPath\n      secretSet\n      verifyTokenSet\n      previousSecretValidUntil\n      lastEvent {\n        id\n        eventType\n        status\n        receivedAt\n      }\n      freshness {\n        usualGapSeconds\n        silentAfterSeconds\n        silent\n        silentSince\n      }\n    }\n  }\n"): (typeof documents)["\n  query Integrations {\n    integrations {\n      provider\n      inboundPath\n      secretSet\n      verifyTokenSet\n      previousSecretValidUntil\n      lastEvent {\n        id\n        eventType\n        status\n        receivedAt\n      }\n      freshness {\n        usualGapSeconds\n        silentAfterSeconds\n        silent\n        silentSince\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetInboundSecret($provider: Provider!, $secret: String, $verifyToken: String) {\n    setInboundSecret(provider: $provider, secret: $secret, verifyToken: $verifyToken) {\n      provider\n      secret\n      rotated\n    }\n  }\n"): (typeof documents)["\n  mutation SetInboundSecret($provider: Provider!, $secret: String, $verifyToken: String) {\n    setInboundSecret(provider: $provider, secret: $secret, verifyToken: $verifyToken) {\n      provider\n      secret\n      rotated\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment WeightsFields on HealthWeights {\n    usage\n    engagement\n    support\n    billing\n    growth\n    isDefault\n  }\n"): (typeof documents)["\n  fragment WeightsFields on HealthWeights {\n    usage\n    engagement\n    support\n    billing\n    growth\n    isDefault\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ScoringSettings {\n    healthWeights {\n      ...WeightsFields\n    }\n    churnModel {\n      modelVersion\n      kind\n      trainedAt\n      intercept\n      features {\n        code\n        description\n        coefficient\n        baseline\n      }\n      metrics {\n        auc\n        brier\n        baselineAuc\n        baselineBrier\n        baselineModelVersion\n        samples\n        churned\n        holdout\n        logLoss\n        lambda\n        reliability {\n          predicted\n          observed\n          count\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query ScoringSettings {\n    healthWeights {\n      ...WeightsFields\n    }\n    churnModel {\n      modelVersion\n      kind\n      trainedAt\n      intercept\n      features {\n        code\n        description\n        coefficient\n        baseline\n      }\n      metrics {\n        auc\n        brier\n        baselineAuc\n        baselineBrier\n        baselineModelVersion\n        samples\n        churned\n        holdout\n        logLoss\n        lambda\n        reliability {\n          predicted\n          observed\n          count\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetHealthWeights($input: HealthWeightsInput!) {\n    setHealthWeights(input: $input) {\n      ...WeightsFields\n    }\n  }\n"): (typeof documents)["\n  mutation SetHealthWeights($input: HealthWeightsInput!) {\n    setHealthWeights(input: $input) {\n      ...WeightsFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ResetHealthWeights {\n    resetHealthWeights {\n      ...WeightsFields\n    }\n  }\n"): (typeof documents)["\n  mutation ResetHealthWeights {\n    resetHealthWeights {\n      ...WeightsFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation TrainChurnModel {\n    trainChurnModel(activate: false) {\n      modelVersion\n      kind\n      eligible\n      activated\n      auc\n      brier\n      baselineAuc\n      baselineBrier\n      baselineModelVersion\n      samples\n      churned\n      holdout\n      logLoss\n      lambda\n      reliability {\n        predicted\n        observed\n        count\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation TrainChurnModel {\n    trainChurnModel(activate: false) {\n      modelVersion\n      kind\n      eligible\n      activated\n      auc\n      brier\n      baselineAuc\n      baselineBrier\n      baselineModelVersion\n      samples\n      churned\n      holdout\n      logLoss\n      lambda\n      reliability {\n        predicted\n        observed\n        count\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ActivateChurnModel($modelVersion: String!) {\n    activateChurnModel(modelVersion: $modelVersion) {\n      modelVersion\n    }\n  }\n"): (typeof documents)["\n  mutation ActivateChurnModel($modelVersion: String!) {\n    activateChurnModel(modelVersion: $modelVersion) {\n      modelVersion\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ResetChurnModel {\n    resetChurnModel {\n      modelVersion\n    }\n  }\n"): (typeof documents)["\n  mutation ResetChurnModel {\n    resetChurnModel {\n      modelVersion\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WebhookEndpoint($id: UUID!) {\n    webhookEndpoint(id: $id) {\n      ...EndpointFields\n      previousSecretValidUntil\n      previousPublicKey\n      rateLimitPerSecond\n      filters\n      updatedAt\n    }\n  }\n"): (typeof documents)["\n  query WebhookEndpoint($id: UUID!) {\n    webhookEndpoint(id: $id) {\n      ...EndpointFields\n      previousSecretValidUntil\n      previousPublicKey\n      rateLimitPerSecond\n      filters\n      updatedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WebhookDeliveries($endpointId: UUID!, $first: Int, $after: String) {\n    webhookDeliveries(endpointId: $endpointId, first: $first, after: $after) {\n      totalCount\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n      nodes {\n        id\n        eventType\n        status\n        isTest\n        attempts\n        lastStatusCode\n        lastError\n        nextAttemptAt\n        createdAt\n        envelope\n        attemptLog {\n          attempt\n          startedAt\n          durationMs\n          statusCode\n          error\n          responseBody\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query WebhookDeliveries($endpointId: UUID!, $first: Int, $after: String) {\n    webhookDeliveries(endpointId: $endpointId, first: $first, after: $after) {\n      totalCount\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n      nodes {\n        id\n        eventType\n        status\n        isTest\n        attempts\n        lastStatusCode\n        lastError\n        nextAttemptAt\n        createdAt\n        envelope\n        attemptLog {\n          attempt\n          startedAt\n          durationMs\n          statusCode\n          error\n          responseBody\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateWebhookEndpoint($id: UUID!, $input: WebhookEndpointInput!) {\n    updateWebhookEndpoint(id: $id, input: $input) {\n      ...EndpointFields\n      rateLimitPerSecond\n      filters\n      updatedAt\n    }\n  }\n"): (typeof documents)["\n  mutation UpdateWebhookEndpoint($id: UUID!, $input: WebhookEndpointInput!) {\n    updateWebhookEndpoint(id: $id, input: $input) {\n      ...EndpointFields\n      rateLimitPerSecond\n      filters\n      updatedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation TestWebhookEndpoint($id: UUID!, $event: String) {\n    testWebhookEndpoint(id: $id, event: $event) {\n      deliveryId\n      event\n      success\n      statusCode\n      durationMs\n      error\n    }\n  }\n"): (typeof documents)["\n  mutation TestWebhookEndpoint($id: UUID!, $event: String) {\n    testWebhookEndpoint(id: $id, event: $event) {\n      deliveryId\n      event\n      success\n      statusCode\n      durationMs\n      error\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RotateWebhookSecret($id: UUID!) {\n    rotateWebhookEndpointSecret(id: $id) {\n      secret\n      endpoint {\n        id\n        previousSecretValidUntil\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation RotateWebhookSecret($id: UUID!) {\n    rotateWebhookEndpointSecret(id: $id) {\n      secret\n      endpoint {\n        id\n        previousSecretValidUntil\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteWebhookEndpoint($id: UUID!) {\n    deleteWebhookEndpoint(id: $id)\n  }\n"): (typeof documents)["\n  mutation DeleteWebhookEndpoint($id: UUID!) {\n    deleteWebhookEndpoint(id: $id)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ResendWebhookDelivery($id: UUID!) {\n    resendWebhookDelivery(id: $id)\n  }\n"): (typeof documents)["\n  mutation ResendWebhookDelivery($id: UUID!) {\n    resendWebhookDelivery(id: $id)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ReplayWebhookDeliveries($endpointId: UUID!, $since: DateTime!) {\n    replayWebhookDeliveries(endpointId: $endpointId, since: $since)\n  }\n"): (typeof documents)["\n  mutation ReplayWebhookDeliveries($endpointId: UUID!, $since: DateTime!) {\n    replayWebhookDeliveries(endpointId: $endpointId, since: $since)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment EndpointFields on WebhookEndpoint {\n    id\n    url\n    description\n    events\n    enabled\n    disabledReason\n    signatureScheme\n    publicKey\n    lastSuccessAt\n    createdAt\n  }\n"): (typeof documents)["\n  fragment EndpointFields on WebhookEndpoint {\n    id\n    url\n    description\n    events\n    enabled\n    disabledReason\n    signatureScheme\n    publicKey\n    lastSuccessAt\n    createdAt\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WebhookEndpoints {\n    webhookEndpoints {\n      ...EndpointFields\n    }\n  }\n"): (typeof documents)["\n  query WebhookEndpoints {\n    webhookEndpoints {\n      ...EndpointFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateWebhookEndpoint($input: WebhookEndpointInput!) {\n    createWebhookEndpoint(input: $input) {\n      secret\n      endpoint {\n        id\n        url\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation CreateWebhookEndpoint($input: WebhookEndpointInput!) {\n    createWebhookEndpoint(input: $input) {\n      secret\n      endpoint {\n        id\n        url\n      }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;