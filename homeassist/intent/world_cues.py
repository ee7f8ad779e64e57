"""The vocabulary of request routing, continued: the cues of requests about the world, not the home
(the web: news, sports, travel, money, bookings; the model's general knowledge). Written as
``cue_patterns``'s are, one idea per pattern; ``router.CUES`` gives each its name, kind and weight.
"""

from __future__ import annotations

from homeassist.intent.cue_patterns import DAYPART, MONTH, WEEKDAY, WHEN_WORDS, any_words, either

WEB = (
    any_words(
        r"weather",
        r"forecast",
        r"rain",
        r"raining",
        r"rainy",
        r"snow",
        r"snowing",
        r"snowy",
        r"sunny",
        r"cloudy",
        r"overcast",
        r"storms?",
        r"stormy",
        r"thunder(?:storm)?",
        r"windy",
        r"fog",
        r"foggy",
        r"hail",
        r"humid(?!(?: is it)? (?:in here|inside|indoors|in the house))",
        r"umbrella",
        r"raincoat",
        r"jacket",
        r"sweater",
        r"coat",
        r"sunglass(?:es)?",
        r"sunscreen",
        r"sandals",
        r"shorts",
        r"pollen",
        r"uv index",
        r"sun ?rise",
        r"sun ?set",
        r"news",
        r"headlines?",
        r"stocks?",
        r"shares?",
        r"stock market",
        r"markets?",
        r"dow jones",
        r"nasdaq",
        r"s ?& ?p",
        r"exchange rates?",
        r"currency",
        r"dollars?",
        r"euros?",
        r"pounds? sterling",
        r"rupees?",
        r"yen",
        r"bitcoin",
        r"crypto(?:currency)?",
        r"traffic",
        r"commute",
        r"elections?",
        r"polls?",
        r"price of",
        r"prices?",
        r"worth",
        r"opening hours",
        r"open (?:today|now|until)",
        r"box office",
        r"showtimes?",
        r"trending",
        r"happening",
        r"going on",
    )
    # "how hot is it" alone is the home's thermometer (indoor_temperature); outdoors it is the web's.
    + r"|\bhow (?:hot|cold|warm) will it\b|\bwill it be (?:hot|cold|warm|nice|sunny|rainy)\b"
    r"|\b(?:do|will|should) i (?:need|take|bring|wear)\b|\bwhat'?s it like out\b"
    r"|\b(?:latest|newest|recent|current|breaking) (?:on|about|from|in|updates?|developments?|news|"
    r"stories|articles?|headlines?)\b|\b(?:top stories|front page|articles?|updates? on)\b"
    r"|\bstock (?:price|rate|value)\b|\btrading at\b"
    r"|\bconvert\b.*\b(?:dollars?|euros?|pounds?|rupees?|yen|usd|eur|gbp|inr)\b"
    r"|\b(?:usd|eur|gbp|inr|jpy)\b"
)

SPORTS = any_words(
    r"scores?",
    r"league",
    r"premier league",
    r"nba",
    r"nfl",
    r"mlb",
    r"nhl",
    r"fifa",
    r"world cup",
    r"playoffs?",
    r"tournament",
    r"match",
    r"game",
    r"won",
    r"win",
    r"results?",
    r"standings",
    r"fixtures?",
)
SEARCH = (
    r"\b(?:search|google|bing|duckduckgo|wikipedia|look up|find out|browse|website|online|internet|web)\b"
)
# A trip under way: where a flight, train or bus is now, and what a border or an airline asks today.
# Booking one is not ("book a flight that leaves at 6": no tool of ours books anything).
_CARRIER = (
    r"(?:flights?|planes?|trains?|bus|buses|ferry|ferries|trams?|subway|metro|underground|tube|airlines?|airways|"
    r"(?:united|delta|american|southwest|jetblue|alaska|spirit|frontier|hawaiian) (?:airlines?|flight|\d+)|"
    r"lufthansa|ryanair|easyjet|british airways|air france|klm|emirates|qantas|air canada|aer lingus|"
    r"iberia|westjet|qatar airways|etihad|turkish airlines|virgin atlantic|"
    r"(?:aa|ua|dl|wn|b6|nk|f9|ba|af|lh|kl|ek|qf|ei|ib|vs|u2|tk|qr|ey|sq|cx|nh|jl|lx|fr) ?\d{1,4})"
)
_TRIP_STATE = (
    r"(?:delay(?:s|ed)?|late|on time|on schedule|cancell?ed|cancell?ations?|land(?:ed|s|ing)?|"
    r"arriv(?:e|es|ed|al|ing)|depart(?:s|ed|ure|ing)?|take off|taken off|took off|taking off|status|"
    r"gate|terminal|boarding|track|diverted|leaves?|leaving|left|strikes?|disruptions?|running|due|"
    r"expected|come|coming)"
)
#: Where a flight, train or bus is now.
_TRIP_NOW = (
    r"(?:"
    + either(_CARRIER, _TRIP_STATE)
    + r"|\b(?:next|last) (?:flight|plane|train|bus|ferry|tram|subway)\b"
    r"|\b(?:when|where)(?:'s| is) (?:my|our|the) (?:next )?(?:flight|plane|train|bus|ferry)\b"
    r"|\b(?:flight|plane|train|bus)\b.*\bget(?:s|ting)? in\b)"
)
TRAVEL = (
    r"^(?!.*\b(?:book|reserve|buy|purchase|cheap|cheapest|fares?|tickets?|find me|search for)\b).*"
    + _TRIP_NOW
    + r"|"
    + either(
        r"airports?|o'?hare|jfk|lax|heathrow|gatwick|sfo",
        r"busy|delays?|wait|waiting|lines?|queues?|security|crowded|closed|status",
    )
    + r"|\btravel (?:alerts?|warnings?|advisor(?:y|ies)|bans?|restrictions?|notices?|requirements?|rules?)\b"
    r"|\b(?:safe|dangerous|unsafe|risky) (?:to |for \w+ to )?(?:travel|visit|fly)\b"
    r"|\bsafe for (?:tourists|travell?ers|americans|visitors|foreigners)\b"
    r"|\b(?:alerts?|warnings?|advisor(?:y|ies)|restrictions?|bans?) (?:for|on|about|when) "
    r"(?:travell?ing|travel|visiting|going to|trips? to)\b"
    r"|\b(?:safe|dangerous|unsafe|risky) (?:to )?go to\b"
    r"|\b(?:can|should|may) (?:i|we|\w+ citizens|\w+ns|tourists) (?:travel|fly) to\b"
    r"|\b(?:need|get|require|requires|required|apply for) (?:a |an )?(?:\w+ )?visas?\b"
    r"|\bvisas? (?:requirements?|rules?|for|to|on arrival|needed|required|policy|waiver)\b"
    r"|\b(?:without|with) (?:a |an )?(?:\w+ )?visas?\b(?! card)"
    r"|\b(?:entry|passport|border|customs|quarantine|covid|travel) (?:requirements?|rules?|restrictions?|"
    r"closures?)\b"
    r"|\b(?:baggage|luggage|carry ?-?ons?|checked bags?|suitcases?|bags?)\b.*\b(?:allowance|allowed|"
    r"limits?|fees?|weight|size|dimensions|policy|can i (?:bring|take|carry))\b"
    r"|\bhow (?:many|heavy|big|large) (?:can )?(?:my )?(?:bags|baggage|luggage|carry ?-?ons|suitcases?)\b"
    r"|\b(?:a|my|the|how many|of) carry ?-?ons?\b(?! (?:playing|with|the)\b)"
    r"|\bcarry ?-?on (?:bags?|luggage|baggage|limit|allowance|rules?|policy|size)\b"
    r"|\bcheck(?:ed|ing)? (?:a |my |two |three |\d+ )?(?:bags?|suitcases?|luggage)\b"
)
# Warnings and alerts about the world outside: fresh information.
ALERT = (
    r"\b(?:weather|storm|tornado|hurricane|flood|tsunami|heat|travel|air quality|severe|fire|avalanche|"
    r"wind|snow|ice|frost|smog) (?:alert|warning|advisory|watch)(?:es|s)?\b"
    r"|\b(?:tornado|hurricane|earthquake|wildfire|blizzard|heatwave|heat wave)s?\b"
)
# Asking about now or lately: what a web search is for.
FRESH = (
    r"\b(?:today|tonight|yesterday|last night|this (?:week|weekend|morning|evening)|right now|"
    r"currently|at the moment|lately|latest|tomorrow|next week)\b"
)
# History and trivia are knowledge, not news.
HISTORY = r"\b(?:in|since|of|from|before|after) (?:1[0-9]|20)\d\d\b|^(?:who|what|which) (?:was|were)\b"

# Requests we have no tool for: mail, messages, social media, lists, music, calls, shopping, notes.
COMMUNICATION = any_words(
    r"e-?mails?",
    r"mail",
    r"inbox",
    r"messages?",
    r"texts?",
    r"sms",
    r"whatsapp",
    r"facebook",
    r"twitter",
    r"tweets?",
    r"instagram",
    r"linkedin",
    r"social media",
    # "post a status update"; "a status update on the lights" asks for the devices' states.
    r"status update(?! (?:on|of|for|about) (?:the|my|all|every)\b)",
    r"contacts?",
    r"phone ?book",
)
GENERAL_DOMAIN = (
    any_words(
        r"posts?",
        r"call",
        r"dial",
        r"ring",
        # A list to keep; "list the lights that are on" asks for a report.
        r"lists?(?! (?:all|every|each|the|my|our|which|what|everything|anything)\b)",
        r"to ?do",
        r"chores?",
        r"shopping",
        r"groceries",
        r"cart",
        r"order",
        r"amazon",
        r"wishlist",
        r"notes?",
        r"songs?",
        r"music",
        r"playlists?",
        r"album",
        r"artist",
        r"podcasts?",
        r"audiobooks?",
        r"radio",
        r"spotify",
        r"jokes?",
        r"recipes?",
        r"takeaway",
        r"uber",
        r"taxi",
        r"ticket",
    )
    + r"|\bplay\b.*\b(?:game|chess|crossword|quiz|trivia|cards)\b|\bgame of\b"
)
# One's money and accounts: no tool of ours sees them. A device or price word inside ("a limit on my
# card", "lock my debit card", "200 dollars to savings") makes them neither a device nor the news.
MONEY = (
    any_words(
        r"(?:credit|debit|atm|bank|gift|prepaid|rewards?|store|visa|discover|chase|amex) cards?",
        r"master ?card",
        r"amex",
        r"american express",
        r"capital one",
        r"(?:bank|checking|savings|brokerage|retirement|joint|current) accounts?",
        r"accounts?",
        r"(?<!power )(?<!river )banks?",
        r"banking",
        r"credit (?:limit|score|report|line|rating|history|union)",
        r"(?:spending|withdrawal|daily|card) limit",
        r"(?:my|our) (?:\w+ )?limit",
        r"take ?home pay",
        r"balances?",
        r"transactions?",
        r"(?:card|recent|last) purchases?",
        r"statements?",
        r"(?:routing|account|card|pin) number",
        r"pin(?: code)?",
        r"apr",
        r"interest(?: rates?)?(?!.*\b(?:today|right now|currently|this week|lately)\b)",
        r"overdra(?:ft|wn)",
        r"direct deposit",
        r"pay ?checks?",
        r"pay ?day",
        r"pay ?stubs?",
        r"salary",
        r"wages?",
        r"income",
        r"tax(?:es)?",
        r"w ?2",
        r"1099",
        r"401 ?k",
        r"ira",
        r"pension",
        r"mortgage(?!.*\b(?:today|right now|currently|this week|lately)\b)",
        r"loans?",
        r"debts?",
        r"(?:reward|rewards|loyalty|credit card) (?:points|miles)",
        r"pto",
        r"(?:vacation|sick|personal|paid) (?:days|time|leave)",
        r"time off",
        r"cash ?back",
        r"bills?",
        r"(?:minimum|monthly|card|loan|rent|mortgage) payments?",
        r"(?:annual|foreign transaction|overdraft|late|atm|card|account|bank|transfer) fees?",
        r"fraud(?:ulent)?",
        r"net worth",
        r"budget",
        r"(?<!daylight )(?<!energy )savings",
        r"(?:my|from|to|into) checking",
        r"checkbook",
        r"cheque(?:book|s)?",
        r"chequing",
        r"receipts?",
        r"withdraw(?:al|als|n)?",
        r"deposits?",
        r"rent (?:payment|due|paid)",
        r"(?:new|order) checks",
        r"insurance",
        r"paypal",
        r"venmo",
        r"zelle",
    )
    + r"|\b(?:my|our) (?:\w+ )?cards?\b|\bmy visa\b(?! (?:for|to|application|requirements?)\b)"
    r"|\b(?:my|much|send|transfer|wire|move) (?:money|cash|funds)\b|\b(?:a|make a|wire|bank) transfer\b"
    r"|\btransfer \$?\d|\bpay (?:my|the|off|for|a|an|\d)\b|\bget paid\b|\bspen(?:d|t|ding)\b"
    r"|\b(?:charges?|charged) (?:on|to) (?:my|the|our)\b|\bcharges\b"
    r"|\b(?:do|did) (?:i|we) (?:owe|earn|make)\b"
    r"|\bhow much (?:do|did|will) (?:i|we) (?:owe|earn|make|have)\b"
)
# Bookings and availability: no tool of ours books anything, and a date in them is no timer.
BOOKING = (
    r"\b(?:tickets?|reservations?|reserve|hotels?|airbnb|check(?:ing)? ?(?:in|out)|table for|"
    r"rent(?:al)? (?:a )?car|seats? (?:for|on|at))\b|\bbook (?:a|an|me|us|the|my|two|three|four)\b"
    # A flight is a booking unless the question is where it is now ("is my flight delayed": travel).
    r"|^(?!.*" + _TRIP_NOW + r").*\bflights?\b"
)
# Asking how to do something: knowledge, not news.
HOW_TO = (
    r"^(?:how (?:can|do|should|would|could|to) (?:i|we|you|one)?|how to|what(?:'s| is) the best way to)\b"
    r"|\b(?:tips|advice|steps) (?:for|on|to)\b"
)
# Asking what is on one's calendar: a calendar request (timer), not small talk.
CALENDAR_QUESTION = (
    r"\b(?:am i|are we)(?: \w+)? (?:free|available|busy|booked|open)\b"
    r"|\bis \w+ (?:free|available|busy|booked)\b"
    r"|\b(?:if|whether|when) (?:i'm|i am|we're|we are)(?: \w+)? (?:free|available|busy|booked|open)\b"
    r"|\bis (?:\d{1,2}(?: \d\d)?(?: ?(?:am|pm|o'clock))?|noon) (?:free|open|available|taken)\b"
    r"|\bhave (?:i |we )?(?:got )?(?:any |some )?(?:free |spare )?time "
    r"(?:on|at|this|next|tomorrow|today|tonight)\b"
    r"|\bwhat(?:'?s| is| does| do)? (?:on )?my (?:day|week|weekend|morning|afternoon|evening|"
    + WEEKDAY
    + r"|"
    + MONTH
    + r"|schedule|calendar)\b.*\b(?:look|like|have|hold)\b"
    r"|\bwhat do (?:i|we) have (?:on(?! (?:my|the|our) (?:\w+ )?(?:list|to do|cart|plate))|going on|planned|"
    r"scheduled|booked|today|tomorrow|this|next)\b"
    r"|\bdo (?:i|we) have (?:anything|something|plans) (?:on(?= (?:for |at )?(?:"
    + WHEN_WORDS
    + r")\b| ?$)|planned|"
    r"scheduled|today|tomorrow|this|next)\b"
    # Availability, said of oneself or of a stretch of one's time ("is my afternoon open").
    r"|\bhow (?:free|busy|booked|packed) (?:am i|are we|is my)\b"
    r"|\bis (?:my|our) (?:\w+ )?(?:" + DAYPART + r")\b(?: \w+)? (?:free|available|busy|booked|open|clear|"
    r"empty|packed|full)\b"
    r"|\bis (?:" + WEEKDAY + r"|tomorrow|today)(?: (?:morning|afternoon|evening|night))? (?:free|open|"
    r"available|busy|booked)\b"
    r"|\b(?:any|my next|the next|next) (?:free|open|spare) (?:time|slots?|spots?|hours?)\b"
    r"|\bdoes (?:" + WEEKDAY + r"|tomorrow|today)(?: \w+)?(?: at \d+)? work(?: for (?:me|us))?$"
    r"|\b(?:my|our) (?:availability|commitments|engagements)\b|\bon my plate\b"
    # "what does friday look like", "how's next week looking": a stretch of one's time, not the sky.
    r"|^(?!.*\b(?:weather|forecast|outside|rain|snow|temperature|sky|traffic|sunny)\b).*\b(?:what|how)"
    r"(?:'?s| is| does| do| will)? (?:the rest of |my |our |this |next |the )*(?:" + DAYPART + r")\b"
    r"(?: \w+)?(?: \w+)? (?:look(?:s|ing)?|shaping up|shape up)\b"
    r"|\b(?:what am i|what are we|am i|are we) (?:doing|up to)\b.*\b(?:" + WHEN_WORDS + r")\b"
    r"|\b(?:do|have|did|will) (?:i|we) (?:have |got |have got )(?:any(?:thing)? |something |some |nothing )?"
    r"(?:on(?= (?:for |at )?(?:"
    + WHEN_WORDS
    + r")\b| ?$)|planned|scheduled|booked|lined up|going on|happening|plans|"
    r"commitments?|engagements?|appointments?|events?)\b"
    r"|\b(?:any|my|our|what) plans (?:for |on |at )?(?:" + WHEN_WORDS + r")\b"
    r"|\banything (?:on|planned|scheduled|booked|happening|going on|lined up) (?:for |on |at )?(?:"
    + WHEN_WORDS
    + r")\b"
    r"|\bwhat(?:'?s| is| are)? (?:on|planned|scheduled|booked|lined up) (?:for |on )?(?:me |us )?(?:"
    + WHEN_WORDS
    + r")\b"
    r"|\bcoming up (?:for me|for us|on my|in my)\b|\b(?:i|we) (?:have|got) coming up\b"
    r"|\b(?:what(?:'?s| is)|anything) coming up(?: (?:today|tomorrow|this week|next week|later))?$"
)
QUESTION_KNOWLEDGE = (
    r"^(?:who|whom|whose|why|where|define|explain|spell|translate|calculate)\b"
    r"|^(?:what|which|how) .*\b(?:is|are|was|were|do|does|did)\b"
    r"|^what (?:is|are|was|were|does|do) (?:a|an|the)\b(?!.*\b(?:temperature|time|date|weather|"
    r"forecast|score|price)\b)"
    r"|\b(?:meaning of|definition of|capital of|how many \w+ (?:in|are in) a)\b"
)
