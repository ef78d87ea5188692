"""Where the model is reached and with what credential: the cloud providers (Bedrock, Vertex,
Foundry) and a key printed by a helper command."""
