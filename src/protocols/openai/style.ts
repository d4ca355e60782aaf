import { bearerToken, type ClientStyle } from '../../http/client-style.js';

/** OpenAI's clients: `Authorization: Bearer`, and `{ error: { message, type, param, code } }`. */
export const openaiStyle: ClientStyle = {
  name: 'openai',
  apiKey: bearerToken,
  missingKeyMessage: "You didn't provide an API key. Send it as 'Authorization: Bearer YOUR_KEY'.",
  errorBody: (error) => ({ error: { message: error.message, type: error.type, param: error.param, code: error.code } }),
};
